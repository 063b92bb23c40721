//! AF_PACKET sender (sys module). Filled in by the raw-sender work.
