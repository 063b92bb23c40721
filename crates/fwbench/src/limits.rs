//! Every limit on what a user may ask for, in one place, each with its reason.
//!
//! The limits are enforced where the value is parsed (command line, scenario, workload
//! and testbed files), so a request beyond one exits 2 with a message naming the value
//! and where it was written, before anything runs. docs/limits.md lists them for users.
//! Limits owned by a lower crate (the frame size of the protocol, the rule generator's
//! guard, the CPU list parser) are re-exported here so this file is the whole list.
//!
//! Must not: import any other module of the binary (it is at the bottom of the map).

// Some limits are enforced in lower crates and listed here for the whole picture.
#![allow(dead_code)]

use std::io::Read;
use std::path::Path;

/// Most clients of one trial. Each client gets its own address from the testbed's
/// address plan (a /16 per side), and the echo results carry one row per client.
pub const MAX_CLIENTS: u32 = 65_000;

/// Most trials one scenario may expand to (cross product × cases × repetitions).
/// The plan is held in memory and every trial takes at least a second: 100 000 trials
/// are already more than a day of measurement. Counted before the product is built.
pub const MAX_TRIALS: u64 = 100_000;

/// A scenario with more `[[case]]` or `[[firewall]]` rows than it may have trials.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{file}:{line}:1: {header}: {rows} {header} rows; each row is at least one trial and \
     a scenario may have at most {MAX_TRIALS} trials (row {} is on this line)",
    MAX_TRIALS + 1
)]
pub struct TooManyRows {
    pub file: String,
    /// The line of the first row beyond the limit.
    pub line: usize,
    /// `[[case]]` or `[[firewall]]`.
    pub header: String,
    pub rows: usize,
}

/// Refuse a scenario text with more `[[case]]` or `[[firewall]]` rows than
/// [`MAX_TRIALS`] before it is parsed (657 000 rows took ~1 GB of memory in the TOML
/// parser before the trial count was checked): the message names the file, the line of
/// the first row beyond the limit and the count.
pub fn check_table_rows(file: &str, text: &str) -> Result<(), TooManyRows> {
    for table in ["case", "firewall"] {
        let header = format!("[[{table}]]");
        // A header line, spaces inside the brackets allowed (`[[ case ]]`).
        let is_row = |line: &str| {
            let l: String = line
                .chars()
                .take(64)
                .filter(|c| !c.is_whitespace())
                .collect();
            l.starts_with(&header)
        };
        let rows: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| is_row(l))
            .map(|(i, _)| i + 1)
            .collect();
        if rows.len() as u64 > MAX_TRIALS {
            return Err(TooManyRows {
                file: file.to_string(),
                line: rows[MAX_TRIALS as usize],
                header,
                rows: rows.len(),
            });
        }
    }
    Ok(())
}

/// Longest label of a trial, a `[[case]]` or a `[[firewall]]` row, in bytes. Every
/// trial carries its label (a scenario may have [`MAX_TRIALS`] of them) and its key
/// hashes it: a 1 MB label with 1000 repetitions took 3.1 GB for `run --dry-run`, and
/// 20 MB ran out of memory. A label is a few words for a table's row.
pub const MAX_LABEL: usize = 4096;

/// Longest name (a scenario's `name`, a testbed's name), in bytes: names are printed
/// in headings and stored with every run.
pub const MAX_NAME: usize = 4096;

/// Longest `description` of a scenario, in bytes (it may span lines).
pub const MAX_DESCRIPTION: usize = 64 << 10;

/// Longest path of a file a scenario names (`import`, `import_ipset`, `[testbed]
/// file`), in bytes: Linux's `PATH_MAX`.
pub const MAX_PATH: usize = 4096;

/// Longest text of any other value of a scenario (an axis value, a program name, an
/// `aim`), in bytes: the longest meaningful one is a path or a command line.
pub const MAX_VALUE_TEXT: usize = 4096;

/// Which control characters a text may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// One line: no control character at all (labels, names, values).
    One,
    /// Several lines: tab and newline allowed (a description).
    Several,
}

/// A text a user gave that is too long or holds a control character.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("{len} bytes long, more than the {max} bytes allowed")]
    TooLong { len: usize, max: usize },
    #[error(
        "control character U+{code:04X} at byte {at}; NUL, ESC and the other control \
         characters are refused (they would reach terminals and reports)"
    )]
    Control { code: u32, at: usize },
}

/// Check a text a user gave: at most `max` bytes, no control characters (but tab and
/// newline for [`Lines::Several`]). The length is checked first, so a huge text is
/// refused without being scanned.
pub fn check_text(text: &str, max: usize, lines: Lines) -> Result<(), TextError> {
    if text.len() > max {
        return Err(TextError::TooLong {
            len: text.len(),
            max,
        });
    }
    let allowed = |c: char| lines == Lines::Several && (c == '\t' || c == '\n');
    match text
        .char_indices()
        .find(|&(_, c)| c.is_control() && !allowed(c))
    {
        Some((at, c)) => Err(TextError::Control {
            code: u32::from(c),
            at,
        }),
        None => Ok(()),
    }
}

/// Most values one `A..B step S` range of a scenario expands to.
pub const MAX_RANGE_VALUES: u64 = 100_000;

/// Most rules one generated rule set may hold: at ~300 bytes of kernel memory per rule,
/// 10^6 rules are ~300 MB, and installing them takes minutes with the slower engines.
pub const MAX_RULES: u32 = firewall::models::MAX_RULES;

/// Largest control-protocol frame body: a peer announcing more is broken or hostile.
pub const MAX_FRAME_LEN: usize = proto::codec::MAX_FRAME_LEN;

/// Highest CPU number plus one in a CPU list (`0-3,6`): the kernel's largest
/// `NR_CPUS`. The list is expanded into one entry per CPU, so a range is checked
/// against this before it is expanded (`0-18446744073709551615` would not fit memory).
pub const MAX_CPUS: usize = traffic::sys::MAX_CPUS;

/// Largest file fwbench reads as input (scenario, workload, testbed, rule import):
/// 1 000 000 rules of `iptables-save` text are ~100 MB; anything larger is not a
/// file fwbench wrote or a person typed (`/dev/zero`, a log, a disk image).
pub const MAX_INPUT_FILE: u64 = 128 << 20;

/// Deepest nesting of blocks in a workload file: the parser and the runner recurse
/// once per level, and the stack of a thread is finite (a file nested 20 000 deep
/// overflowed it). No sensible workload nests more than a handful of blocks.
pub const MAX_WORKLOAD_DEPTH: usize = 64;

/// Most repetitions of one workload block.
pub const MAX_REPEAT: u32 = 1_000_000;

/// Most commands a workload file may expand to in total (the record of every command
/// run is kept in memory).
pub const MAX_COMMANDS: u64 = 10_000_000;

/// Most commands of a workload running at once (`parallel`, `random` blocks, nested:
/// the product). Each is a thread and a child process; a few thousand exhaust the
/// process limits of a usual host and thread creation fails.
pub const MAX_CONCURRENT_COMMANDS: u64 = 1024;

/// Longest duration of anything (trial, warm-up, hold, interval): one day.
pub const MAX_DURATION_S: f64 = 86_400.0;

/// Shortest duration of a trial or wait: one millisecond. Shorter is below the
/// resolution of the controller's phase timing (a `-t 1e-300` trial measures nothing).
pub const MIN_DURATION_S: f64 = 1e-3;

/// Most probes of one `ping` trial (`--count`): at 1 µs per probe, a day.
pub const MAX_PING_COUNT: u32 = 100_000_000;

/// `--ct-buckets`: the host's conntrack hash table is allocated whole when its size is
/// set (8 bytes a bucket, global on most kernels): 2²⁴ buckets are 128 MiB, room for
/// tens of millions of entries; u32::MAX would ask the kernel for 32 GiB.
pub const MAX_CT_BUCKETS: u32 = 1 << 24;

/// Highest packet rate accepted (`--rate`, `--max-rate`): far above what any software
/// path here reaches.
pub const MAX_PPS: f64 = proto::MAX_PPS;

/// Why a user file cannot be read: `{path}: cannot read {what}: {why}`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: cannot read {what}: {why}", path.display())]
pub struct UnreadableFile {
    pub path: std::path::PathBuf,
    /// Which kind of file (`scenario`, `rule import`, …).
    pub what: String,
    /// Why, phrased for after the file name.
    pub why: String,
}

/// For callers that carry messages as text.
impl From<UnreadableFile> for String {
    fn from(e: UnreadableFile) -> String {
        e.to_string()
    }
}

fn refuse(path: &Path, what: &str, why: impl std::fmt::Display) -> UnreadableFile {
    UnreadableFile {
        path: path.to_path_buf(),
        what: what.to_string(),
        why: why.to_string(),
    }
}

/// Read a file the user named (`what` says which kind, for messages): only regular
/// files, at most [`MAX_INPUT_FILE`] bytes, as UTF-8. A FIFO, a device (`/dev/zero`)
/// or a directory is refused without reading (a FIFO without a writer would block
/// the open itself, so the file is opened non-blocking and checked again once open).
/// Every user file of the binary is read through here.
pub fn read_user_file(path: &Path, what: &str) -> Result<String, UnreadableFile> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::metadata(path).map_err(|e| refuse(path, what, e))?;
    let regular = |m: &std::fs::Metadata| {
        if m.is_file() {
            Ok(())
        } else {
            Err(refuse(
                path,
                what,
                format!("not a regular file ({})", kind(m.file_type())),
            ))
        }
    };
    regular(&meta)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refuse(path, what, e))?;
    let meta = f.metadata().map_err(|e| refuse(path, what, e))?;
    regular(&meta)?;
    let too_big = || {
        refuse(
            path,
            what,
            format!(
                "larger than {} MiB (the input file limit)",
                MAX_INPUT_FILE >> 20
            ),
        )
    };
    if meta.len() > MAX_INPUT_FILE {
        return Err(too_big());
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_INPUT_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| refuse(path, what, e))?;
    if buf.len() as u64 > MAX_INPUT_FILE {
        return Err(too_big());
    }
    String::from_utf8(buf).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        refuse(
            path,
            what,
            format!("not UTF-8 text (line {line}, byte {col} of the line; byte {at} of the file)"),
        )
    })
}

fn kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_files_are_regular_and_bounded() {
        let dir = std::env::temp_dir().join(format!("fwb-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "name = \"x\"\n").unwrap();
        assert_eq!(read_user_file(&ok, "scenario").unwrap(), "name = \"x\"\n");
        let e = read_user_file(Path::new("/dev/zero"), "scenario")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("character device"),
            "{e}"
        );
        let e = read_user_file(&dir, "workload file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a directory"), "{e}");
        // A FIFO without a writer: refused at once, not a hang.
        let fifo = dir.join("fifo");
        let st = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(st.unwrap().success());
        let e = read_user_file(&fifo, "import").unwrap_err().to_string();
        assert!(e.contains("a FIFO") && e.contains("import"), "{e}");
        // Larger than the limit (a sparse file: no disk used).
        let big = dir.join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_INPUT_FILE + 1).unwrap();
        let e = read_user_file(&big, "import").unwrap_err().to_string();
        assert!(e.contains("larger than 128 MiB"), "{e}");
        std::fs::write(&big, b"*filter\n:INPUT ACCEPT\xff\n").unwrap();
        let e = read_user_file(&big, "import").unwrap_err().to_string();
        assert!(
            e.ends_with("not UTF-8 text (line 2, byte 14 of the line; byte 21 of the file)"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn texts_are_bounded_and_one_line_texts_hold_no_control_characters() {
        assert_eq!(check_text("seed 003: nft", MAX_LABEL, Lines::One), Ok(()));
        assert_eq!(
            check_text(&"x".repeat(MAX_LABEL + 1), MAX_LABEL, Lines::One),
            Err(TextError::TooLong {
                len: MAX_LABEL + 1,
                max: MAX_LABEL
            })
        );
        assert_eq!(
            check_text("a\u{1b}[31m", MAX_LABEL, Lines::One),
            Err(TextError::Control { code: 0x1b, at: 1 })
        );
        assert!(check_text("a\0", MAX_LABEL, Lines::One).is_err());
        assert!(check_text("a\tb", MAX_LABEL, Lines::One).is_err());
        assert_eq!(check_text("a\tb\nc", MAX_NAME, Lines::Several), Ok(()));
        assert!(check_text("a\u{7f}", MAX_NAME, Lines::Several).is_err());
        let e = check_text("\u{1b}", 10, Lines::One)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("control character U+001B at byte 0;"), "{e}");
    }

    #[test]
    fn too_many_case_rows_are_refused_before_parsing_with_their_line() {
        let row = "[[case]]\nrules = 1\n";
        let text = format!("name = \"x\"\n{}", row.repeat(MAX_TRIALS as usize + 2));
        let e = check_table_rows("s.toml", &text).unwrap_err().to_string();
        // Row 100 001 starts on line 2 + 2 × 100 000.
        assert!(
            e.starts_with(&format!(
                "s.toml:{}:1: [[case]]: 100002 [[case]] rows",
                2 + 2 * MAX_TRIALS
            )),
            "{e}"
        );
        assert!(check_table_rows("s.toml", &row.repeat(1000)).is_ok());
        let fw = "[[ firewall ]]\n".repeat(MAX_TRIALS as usize + 1);
        assert!(check_table_rows("f.toml", &fw)
            .unwrap_err()
            .to_string()
            .contains("[[firewall]]"));
    }
}
