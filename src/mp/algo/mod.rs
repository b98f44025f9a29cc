//! The algorithms, one file each, what they are built from ([`Setup`]), and the one table of
//! them ([`table`]).

pub mod lkcs;
pub mod ra1;
pub mod ra2;
pub mod ricart_agrawala;
pub mod setup;
pub mod suzuki_kasami;
pub mod table;
pub mod token_gme;

pub use setup::Setup;
pub use table::{info, names, AlgoInfo, Make, ALGOS};
