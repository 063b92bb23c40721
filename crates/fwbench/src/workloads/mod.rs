pub mod conn;
pub mod echo;
pub mod packet;
