#include "src/crm/services.h"
