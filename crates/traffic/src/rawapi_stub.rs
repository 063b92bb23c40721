//! TEMPORARY: the raw-sender API while it is being written (removed when it lands).
#![allow(dead_code, unused_variables)]
pub mod packet {
    pub type Mac = [u8; 6];
    pub fn parse_mac(s: &str) -> Result<Mac, String> { todo!() }
    pub fn if_mac(ifname: &str) -> std::io::Result<Mac> { todo!() }
    pub struct UdpTemplate;
    impl UdpTemplate {
        pub fn new(a: Mac, b: Mac, src: std::net::SocketAddr, dst: std::net::SocketAddr, payload_len: usize) -> Result<Self, String> { todo!() }
        pub fn frame_len(&self) -> usize { todo!() }
        pub fn write(&self, out: &mut [u8], payload: &[u8], ip_id: u16) { todo!() }
    }
}
pub mod rawsock {
    pub struct RawSender;
    impl RawSender {
        pub fn open(ifname: &str) -> Result<RawSender, crate::TrafficError> { todo!() }
        pub fn send_batch(&mut self, frames: &[&[u8]]) -> std::io::Result<usize> { todo!() }
    }
}
