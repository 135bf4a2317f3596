//! The S3 endpoint of the tests of issue #34 (dev/moto.rs): moto in server mode from the test
//! venv holds what was uploaded, and independent clients (boto3, curl with SigV4) read byte
//! ranges of it through the environment `MotoServer::env` gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use marquet_dev::moto::{self, MotoServer};

/// The test venv's Python (scripts/pyvenv.sh) when it has moto; a skip otherwise, never on
/// CI (as tests/common/mod.rs `venv_python_with`).
fn venv_python() -> Option<PathBuf> {
    let py = Path::new(&std::env::var("HOME").unwrap_or_default()).join(".cache/marquet/pyvenv/bin/python");
    let ok = py.exists() && Command::new(&py).args(["-c", "import moto.server, boto3"]).status().map(|s| s.success()).unwrap_or(false);
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI is set but the test venv has no moto: run scripts/pyvenv.sh");
        println!("NOTICE: skipping: no venv with moto at {}", py.display());
        return None;
    }
    Some(py)
}

#[test]
fn upload_then_ranged_reads() {
    let Some(py) = venv_python() else { return };
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let s = MotoServer::start(&py, "marquet-test").unwrap();
    s.put("dir/data.bin", &data).unwrap();
    let f = std::env::temp_dir().join(format!("marquet-moto-{}.bin", std::process::id()));
    std::fs::write(&f, &data[..1000]).unwrap();
    s.upload_file("small.bin", &f).unwrap();
    std::fs::remove_file(&f).unwrap();
    assert_eq!(s.url("dir/data.bin"), "s3://marquet-test/dir/data.bin");

    // boto3 with the documented environment: signed ranged GETs, and a HEAD.
    let script = "import boto3, sys\n\
c = boto3.client('s3')\n\
r = c.get_object(Bucket='marquet-test', Key='dir/data.bin', Range='bytes=123456-123555')\n\
sys.stdout.buffer.write(r['Body'].read())\n\
sys.stdout.buffer.write(c.get_object(Bucket='marquet-test', Key='small.bin', Range='bytes=-10')['Body'].read())\n\
sys.stderr.write(str(c.head_object(Bucket='marquet-test', Key='dir/data.bin')['ContentLength']))\n";
    let out = s.apply_env(Command::new(&py).args(["-c", script])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut want = data[123_456..123_556].to_vec();
    want.extend_from_slice(&data[990..1000]);
    assert_eq!(out.stdout, want);
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "300000");

    // Unsigned requests are refused (objects are private), signed ones served.
    let (st, _, _) = moto::http(s.addr(), "GET", "/marquet-test/dir/data.bin", &[("Range", "bytes=0-9")], &[]).unwrap();
    assert_eq!(st, 403);
    let curl_sigv4 = Command::new("curl").arg("--help").arg("all").output().map(|o| String::from_utf8_lossy(&o.stdout).contains("--aws-sigv4")).unwrap_or(false);
    if curl_sigv4 {
        let out = Command::new("curl")
            .args(["-sS", "-f", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", &format!("{}:{}", moto::ACCESS_KEY_ID, moto::SECRET_ACCESS_KEY)])
            .args(["-r", "299990-", &s.http_url("dir/data.bin")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, &data[299_990..]);
    } else {
        println!("NOTICE: no curl with --aws-sigv4: boto3 alone read the object");
    }
}
