//! The loopback S3 server of the object storage tests (s3s-fs, tests/common/s3.rs) as a
//! program, for benches/bucket.mjs: `cargo run --example s3-server -- PORT ROOT` serves each
//! folder of ROOT as a bucket on 127.0.0.1:PORT, with the access key `flamesite` and the
//! secret key `flamesite-secret`, until it is killed.

#[path = "../tests/common/s3.rs"]
mod s3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port, root] = &args[..] else {
        eprintln!("usage: s3-server PORT ROOT");
        std::process::exit(2);
    };
    let port: u16 = port.parse().unwrap_or_else(|_| {
        eprintln!("s3-server: {port:?} is not a port");
        std::process::exit(2);
    });
    let server = s3::Server::start(std::path::Path::new(root), port);
    eprintln!("s3-server: serving {root} at http://127.0.0.1:{}", server.port);
    server.wait();
}
