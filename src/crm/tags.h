#pragma once
// Tags share the list implementation (lists.h); this header names the tag flavour.
#include "src/crm/lists.h"

namespace crmd::crm {

using TagService = GroupService;
using ListService = GroupService;

}  // namespace crmd::crm
