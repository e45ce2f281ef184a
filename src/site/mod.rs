//! Sites trawl serves itself on loopback: the built-in demo web, the
//! benchmark web, and the
//! small server every integration test and benchmark builds its fixtures on.

pub mod bench;
pub mod demo;
pub mod experiment;
mod server;

pub use server::{Body, Handler, Request, Response, Server, handler};
