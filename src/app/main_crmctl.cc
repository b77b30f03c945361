// crmctl: the operator's command line. `crmctl help` lists the commands.
#include <cstdio>
#include <string>
#include <vector>

#include "src/app/cli/crmctl.h"

int main(int argc, char** argv) { return crmd::app::CrmctlMain(argc, argv); }
