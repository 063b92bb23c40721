pub mod adaptive;
pub mod trial;
