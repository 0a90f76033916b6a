// Generates the protocol code from ../../proto at build time with tonic's
// generator (it runs `protoc`: set PROTOC or have it on PATH, see README.md).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto");
    tonic_prost_build::configure()
        .build_server(false) // a bot is only a client
        .compile_protos(&["../../proto/oddtrick/v1/referee.proto"], &["../../proto"])?;
    Ok(())
}
