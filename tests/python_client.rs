//! mpcmc driven by python-chess, a real client (lichess-bot's). CI installs
//! it (`pip install chess`); without it this test fails.

mod common;

use std::process::Command;

#[test]
fn python_chess_plays_analyses_and_quits() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/client.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_mpcmc"))
        .arg(common::stockfish())
        .output()
        .expect("python3 runs (CI installs python-chess: pip install chess)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("python-chess client: ok"),
        "python-chess client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}
