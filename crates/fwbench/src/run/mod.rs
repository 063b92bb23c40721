//! The commands that run trials and store them: a scenario run with resume, single
//! trials and searches from the command line, the workload language, and the report
//! of a results file (and the comparison of runs). The top of the controller: only `cli` imports it.

pub mod advise;
pub mod compare;
pub mod proof;
pub mod record;
pub mod recovery;
pub mod report;
pub mod scenario;
pub mod search;
pub mod session;
pub mod tags;
pub mod trace;
pub mod trend;
pub mod worklang;
