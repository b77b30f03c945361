#pragma once
// crmctl: the operator's command line (`crmctl help` lists the commands).
namespace crmd::app {
int CrmctlMain(int argc, char** argv);
}
