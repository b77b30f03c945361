#pragma once
// The console's Automations and Sequences (everyone signed in reads; editors and
// administrators switch them on and off):
//   GET  /console/automations           the automations (trigger, status, enrolments) and
//                                       the sequences (list, status, enrolments)
//   GET  /console/automations/view?id=N an automation: its trigger, its steps with each
//                                       step's outcomes (reached, done, failed, skipped:
//                                       ReportService::AutomationReport) and its runs
//   POST /console/automations/view      action=activate: the activate_automation preview
//                                       (the assistant's own, with the contacts it would
//                                       enrol now) and Confirm; action=confirm
//                                       (confirmation_token, approval_id), confirm_flow.h;
//                                       action=deactivate (revision)
//   GET  /console/sequences/view?id=N   a sequence: its emails with their delays, and its
//                                       enrolments (enrolled, sent, failed, completed, ...)
//   POST /console/sequences/view        action=activate | pause (revision): set_sequence_status
// Every POST carries the session's CSRF token (shell.h). Thread-safe; handlers block on
// the database (worker pool).
#include "src/console/shell.h"
#include "src/governance/confirmations.h"
#include "src/marketing/automations.h"
#include "src/marketing/reports.h"
#include "src/marketing/sequences.h"

namespace crmd::console {

struct AutomationPagesDeps {
  marketing::AutomationService* automations = nullptr;
  marketing::SequenceService* sequences = nullptr;
  marketing::ReportService* reports = nullptr;
  governance::ConfirmationService* confirmations = nullptr;
  ConsolePeople people;
};

ConsoleRoutes AutomationRoutes(AutomationPagesDeps deps);

}  // namespace crmd::console
