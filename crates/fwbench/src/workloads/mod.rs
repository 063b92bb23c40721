pub mod conn;
pub mod packet;
