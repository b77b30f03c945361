#pragma once
// crmctl commands. Each module registers its commands in crmctl.cc's table.
namespace crmd::app {
int CrmctlMain(int argc, char** argv);
}
