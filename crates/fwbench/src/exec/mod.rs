pub mod trial;
