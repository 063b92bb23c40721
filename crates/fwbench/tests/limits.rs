//! Bad and unbounded input: every case exits 2 with a message naming the value and
//! where it was written, before anything runs (no panic, no abort, no hang, no
//! unbounded memory). Needs no root: each is refused while parsing.

mod util;

use std::path::Path;
use util::*;

/// `run --dry-run` of a scenario `name` holding `text` (in `d`) is refused naming
/// each of `needles`.
fn dry_run_refused(d: &TempDir, name: &str, text: &str, needles: &[&str]) {
    let s = d.write(name, text);
    expect(&["run", "--dry-run", s.to_str().unwrap()], needles);
}

/// Run fwbench with a deadline (a regression would hang or eat memory otherwise);
/// returns (exit code, stderr).
fn refused(args: &[&str]) -> (i32, String) {
    let o = output_within(spawn_piped(args), 20, &format!("fwbench {args:?}"));
    let code = o.status.code().unwrap_or(-1);
    let err = stderr(&o);
    assert_eq!(code, 2, "fwbench {args:?}: exit {code}: {err}");
    assert!(
        err.starts_with("fwbench: ") || err.starts_with("error: "),
        "{err}"
    );
    (code, err)
}

fn expect(args: &[&str], needles: &[&str]) {
    let (_, err) = refused(args);
    for n in needles {
        assert!(err.contains(n), "fwbench {args:?}: '{n}' not in: {err}");
    }
}

#[test]
fn huge_cpu_lists_are_refused_not_expanded() {
    expect(
        &["echo", "--pin-client", "0-18446744073709551615"],
        &["--pin-client", "largest CPU number"],
    );
    expect(
        &["echo", "--pin-client", "0-1000000000"],
        &["--pin-client", "largest CPU number"],
    );
    let d = TempDir::new();
    dry_run_refused(
        &d,
        "pin.toml",
        "[testbed]\npin_client = \"0-99999999999\"\n",
        &["pin.toml:2:14: testbed.pin_client"],
    );
    dry_run_refused(
        &d,
        "pin.toml",
        "[testbed]\npin_server = \"4095\"\n",
        &["testbed.pin_server", "CPU 4095 does not exist"],
    );
}

#[test]
fn a_cross_product_of_10_8_trials_is_counted_not_built() {
    let d = TempDir::new();
    dry_run_refused(
        &d,
        "big.toml",
        "[params]\nclients = \"1..10000\"\nframe_size = \"100..10099\"\n",
        &["big.toml", "100000000 trials", "more than 100000"],
    );
}

#[test]
fn workload_files_nested_deep_or_too_parallel_are_refused() {
    let d = TempDir::new();
    let w = d.file("deep.txt");
    let deep = "sequential { ".repeat(20_000) + "command \"true\"" + &" }".repeat(20_000);
    std::fs::write(&w, deep).unwrap();
    expect(
        &["workload", w.to_str().unwrap()],
        &["deep.txt:1:", "nested more than 64 deep"],
    );
    std::fs::write(&w, "parallel 1000000 { command \"true\" }\n").unwrap();
    expect(
        &["workload", w.to_str().unwrap()],
        &["deep.txt:1:", "1000000 commands at once"],
    );
}

#[test]
fn non_regular_input_files_are_refused_without_reading() {
    let d = TempDir::new();
    let fifo = d.fifo("fifo");
    let fifo = fifo.to_str().unwrap();
    for (args, what) in [
        (vec!["run", "--dry-run", fifo], "scenario"),
        (vec!["run", "--dry-run", "/dev/zero"], "scenario"),
        (vec!["workload", fifo], "workload file"),
        (vec!["workload", "/dev/zero"], "workload file"),
    ] {
        expect(&args, &[args[args.len() - 1], what, "not a regular file"]);
    }
    // An import named by a scenario: checked by the dry run.
    for import in [fifo, "/dev/zero", "/nonexistent/rules.nft"] {
        let s = d.write(
            "imp.toml",
            format!("[params]\nengine = \"nft\"\nmodel = \"import\"\nimport = \"{import}\"\n"),
        );
        expect(
            &["run", "--dry-run", s.to_str().unwrap()],
            &[import, "rule import"],
        );
    }
    // A testbed file that is a FIFO.
    let tb = d.fifo("tb.toml");
    let s = d.write("s.toml", "");
    expect(
        &cmd!("run --dry-run --testbed", &tb, &s),
        &["tb.toml", "testbed file", "a FIFO"],
    );
    assert!(Path::new(fifo).exists());
}

#[test]
fn nonsense_counts_rates_and_durations_are_refused() {
    expect(
        &["ping", "-c", "4294967295", "-i", "1s"],
        &["--count 4294967295", "above"],
    );
    expect(
        &["ping", "-c", "90000000", "-i", "1s"],
        &["--count 90000000", "longer than a day"],
    );
    expect(
        &["echo", "-t", "1e-300"],
        &["--duration", "shorter than a millisecond"],
    );
    expect(&["flood", "-r", "0"], &["--rate", "zero", "max"]);
    expect(&["ndr", "--max-rate", "0"], &["--max-rate", "zero"]);
    expect(
        &["echo", "--engine", "nft", "--rules", "1000000000"],
        &["--rules", "more than the 1000000"],
    );
    let d = TempDir::new();
    dry_run_refused(
        &d,
        "rules.toml",
        "[params]\nengine = \"nft\"\nrules = 1000000000\n",
        &["rules.toml:3:9: params.rules", "more than the 1000000"],
    );
    // A dry run checks the testbed named.
    let empty = d.write("empty.toml", "");
    expect(
        &cmd!("run --dry-run --testbed Bad_Name", &empty),
        &["Bad_Name"],
    );
}

/// Issue 38: a negative number given to a numeric flag reaches the flag's value parser
/// and gets its message (as `--rate -5` did), not clap's "unexpected argument" or "a
/// value is required".
#[test]
fn negative_numbers_get_the_values_own_message() {
    for (args, needles) in [
        (
            &["echo", "-t", "-1"][..],
            &["--duration", "'-1' must be greater than zero"][..],
        ),
        (
            &["flood", "--flows", "-1"],
            &["--flows", "'-1' is not a whole number of at least 1"],
        ),
        (
            &["ping", "--count", "-5"],
            &["--count", "'-5' is not a whole number of at least 1"],
        ),
        (
            &["echo", "-n", "-3"],
            &["--clients", "'-3' is not a whole number of clients"],
        ),
        (
            &["flood", "--frame", "-64"],
            &["--frame", "-64 is not in 1..=65535"],
        ),
        (
            &["flood", "--rate", "-5"],
            &["--rate", "'-5' must be greater than zero"],
        ),
    ] {
        let (_, err) = refused(args);
        for n in needles {
            assert!(err.contains(n), "fwbench {args:?}: '{n}' not in: {err}");
        }
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

/// Issue 38: a 20 MB label with 1000 repetitions (it ran out of memory in the trial
/// keys; 1 MB took 3.1 GB) is refused at its line at once, within 1 GiB of address
/// space; an ESC in a label is refused with its character.
#[test]
fn huge_labels_and_control_characters_are_refused_at_their_line() {
    let d = TempDir::new();
    let text = format!(
        "repetitions = 1000\n[[case]]\nclients = 2\nlabel = \"{}\"\n",
        "x".repeat(20 << 20)
    );
    let s = d.write("big.toml", text);
    let child = std::process::Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\"", bin()])
        .args(["run", "--dry-run", s.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let o = output_within(child, 20, "the dry run of a 20 MB label");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}", &err[..err.len().min(500)]);
    assert!(
        err.contains("big.toml:4:9: case[1].label: 20971520 bytes long, more than the 4096"),
        "{}",
        &err[..err.len().min(500)]
    );
    dry_run_refused(
        &d,
        "esc.toml",
        "[[case]]\nclients = 2\nlabel = \"red \\u001b[31m\"\n",
        &["esc.toml:3:9: case[1].label: control character U+001B at byte 4"],
    );
}
