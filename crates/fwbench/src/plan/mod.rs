pub mod axes;
pub mod scenario;
