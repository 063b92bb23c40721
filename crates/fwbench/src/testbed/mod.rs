pub mod launcher;
pub mod netns;
pub use netns::*;
