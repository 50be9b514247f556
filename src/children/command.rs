//! Engine command lines, split into argv with shell-words rules.
//!
//! `Evaluator=/usr/games/stockfish` or `Opponent='/opt/my engine/bin' --uci`
//! name a program and its arguments. They are split the way a POSIX shell
//! splits words (quotes and backslashes), but never run through a shell: no
//! expansion, no pipes, nothing a GUI user did not type.

use std::fmt;

use crate::{
    children::{group::End, slurm},
    mpc::Role,
};

/// Why a command line cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad engine command line '{line}': {reason}")]
pub struct CommandError {
    pub line: String,
    pub reason: &'static str,
}

/// A program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineCommand {
    pub program: String,
    pub args: Vec<String>,
}

impl EngineCommand {
    /// How its process group is ended ([`End`]): `srun` by SIGTERM, so that
    /// it cancels its job step; everything else by SIGKILL.
    pub fn end(&self) -> End {
        if self.program_name() == Some("srun") {
            End::Term
        } else {
            End::Kill
        }
    }

    /// Its children run on other machines: it is `ssh …`, `srun …` or a
    /// `slurm` entry's command.
    pub fn is_remote(&self) -> bool {
        self.program == slurm::WORD || matches!(self.program_name(), Some("ssh" | "srun"))
    }

    /// The program's file name (`srun` for `/usr/bin/srun`).
    fn program_name(&self) -> Option<&str> {
        file_name(&self.program)
    }

    /// The program, then its arguments.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.program.as_str()).chain(self.args.iter().map(String::as_str))
    }

    pub fn parse(line: &str) -> Result<EngineCommand, CommandError> {
        let err = |reason| CommandError {
            line: line.to_owned(),
            reason,
        };
        let mut words = split(line).map_err(err)?.into_iter();
        let program = words.next().ok_or_else(|| err("it is empty"))?;
        Ok(EngineCommand {
            program,
            args: words.collect(),
        })
    }
}

/// A command word's file name (`stockfish` for `/usr/games/stockfish`).
pub fn file_name(word: &str) -> Option<&str> {
    std::path::Path::new(word).file_name()?.to_str()
}

impl fmt::Display for EngineCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// One entry of the `Workers` option: `[evaluator:|opponent:|root:]
/// COMMAND [*SLOTS]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerEntry {
    /// The role it serves; `None`: both.
    pub role: Option<Role>,
    /// `root:`: its one child runs the evaluator's searches of the
    /// decision's root and nothing else (the lookahead's calls go to the
    /// other entries).
    pub root: bool,
    /// The command line (`builtin` for the built-in engine), as written.
    pub command: String,
    /// Its children searching at once, each one call at a time.
    pub slots: usize,
}

impl WorkerEntry {
    /// Its children run on other machines: the command is `ssh …`, `srun
    /// …` or a `slurm` entry.
    pub fn is_remote(&self) -> bool {
        EngineCommand::parse(&self.command).is_ok_and(|c| c.is_remote())
    }

    /// A `slurm COMMAND` entry's command line (see [`slurm`]).
    pub fn slurm_command(&self) -> Option<&str> {
        let rest = self.command.trim_start().strip_prefix(slurm::WORD)?;
        rest.starts_with(char::is_whitespace).then(|| rest.trim())
    }
}

/// Why a `Workers` value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkersError {
    #[error("{reason} (in '{entry}')")]
    Entry { entry: String, reason: String },
    #[error("an unclosed quote")]
    Unclosed,
    #[error("no entry serves the {0} role")]
    Unserved(Role),
    #[error("more than one root: entry")]
    TwoRoots,
}

/// Parses `Workers`: entries separated by `;` (outside quotes), each
/// `[evaluator:|opponent:|root:] COMMAND [*SLOTS]`; empty entries are
/// skipped. At most one `root:` entry, of one slot; the others must serve
/// both roles between them (the root entry serves no lookahead call).
/// The command line is split later, by [`EngineCommand::parse`], and
/// checked here the same way.
pub fn parse_workers(text: &str) -> Result<Vec<WorkerEntry>, WorkersError> {
    let mut entries = Vec::new();
    for raw in split_unquoted(text, ';')? {
        let entry = raw.trim();
        if entry.is_empty() {
            continue;
        }
        let bad = |reason: String| WorkersError::Entry {
            entry: entry.to_owned(),
            reason,
        };
        let (role, root, rest) = match entry.split_once(':') {
            Some((word, rest)) if word.trim().eq_ignore_ascii_case("evaluator") => {
                (Some(Role::Evaluator), false, rest)
            }
            Some((word, rest)) if word.trim().eq_ignore_ascii_case("opponent") => {
                (Some(Role::Opponent), false, rest)
            }
            Some((word, rest)) if word.trim().eq_ignore_ascii_case("root") => {
                (Some(Role::Evaluator), true, rest)
            }
            // `eval: sf` is a typo, not a program named `eval:` (a drive
            // letter, `C:/engines/sf.exe`, is one letter).
            Some((word, _))
                if !word.contains(char::is_whitespace)
                    && word.len() >= 2
                    && word.chars().all(char::is_alphabetic) =>
            {
                return Err(bad(format!(
                    "'{word}:' is not evaluator:, opponent: or root:"
                )));
            }
            _ => (None, false, entry),
        };
        let rest = rest.trim();
        // `*N` counts only unquoted, as the last word.
        let (command, slots) = match rest.rsplit_once(char::is_whitespace) {
            Some((command, last)) if last.starts_with('*') && !last.contains(['\'', '"']) => {
                let slots = last[1..]
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_SLOTS).contains(n))
                    .ok_or_else(|| bad(format!("'{last}' is not *1 to *{MAX_SLOTS}")))?;
                (command.trim(), slots)
            }
            _ if rest.starts_with('*') => return Err(bad("the command is empty".to_owned())),
            _ => (rest, 1),
        };
        let parsed = EngineCommand::parse(command).map_err(|e| bad(e.reason.to_owned()))?;
        if parsed.program == slurm::WORD {
            // The allocation sets how many; the root search stays here.
            if parsed.args.is_empty() {
                return Err(bad("slurm needs the engine's command line".to_owned()));
            }
            if root || rest.len() != command.len() {
                return Err(bad(
                    "a slurm entry has a child per ChildThreads CPUs of the allocation: no root:, no *N"
                        .to_owned(),
                ));
            }
        }
        if root && slots > 1 {
            return Err(bad("a root: entry has one child".to_owned()));
        }
        entries.push(WorkerEntry {
            role,
            root,
            command: command.to_owned(),
            slots,
        });
    }
    if entries.iter().filter(|e| e.root).count() > 1 {
        return Err(WorkersError::TwoRoots);
    }
    for role in [Role::Evaluator, Role::Opponent] {
        if !entries
            .iter()
            .any(|e| !e.root && e.role.is_none_or(|r| r == role))
        {
            return Err(WorkersError::Unserved(role));
        }
    }
    Ok(entries)
}

/// The most slots one `Workers` entry may have.
pub const MAX_SLOTS: usize = 1024;

/// `text` split at every `sep` outside single or double quotes (a
/// backslash escapes the next character outside single quotes).
fn split_unquoted(text: &str, sep: char) -> Result<Vec<&str>, WorkersError> {
    let mut parts = Vec::new();
    let (mut start, mut quote, mut escaped) = (0, None, false);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some('"'), '"') => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c == sep => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            (None, _) => {}
        }
    }
    if quote.is_some() {
        return Err(WorkersError::Unclosed);
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// Splits like `sh` does, without expansion.
fn split(line: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unclosed single quote"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unclosed double quote"),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unclosed double quote"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => return Err("trailing backslash"),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        let cases: [(&str, &[&str]); 7] = [
            ("/usr/games/stockfish", &["/usr/games/stockfish"]),
            ("  engine   --uci  ", &["engine", "--uci"]),
            ("'/opt/my engine/bin' -x", &["/opt/my engine/bin", "-x"]),
            (r#""a \"b\" c" d"#, &["a \"b\" c", "d"]),
            (r"my\ engine", &["my engine"]),
            ("''", &[""]),
            ("a'b'\"c\"", &["abc"]),
        ];
        for (line, want) in cases {
            let cmd = EngineCommand::parse(line).expect(line);
            let mut got = vec![cmd.program];
            got.extend(cmd.args);
            assert_eq!(got, want, "{line}");
        }
        for bad in ["", "   ", "'open", "\"open", "x\\"] {
            let e = EngineCommand::parse(bad).expect_err(bad);
            assert!(e.to_string().contains(bad.trim()), "{e}");
        }
    }

    #[test]
    fn workers_are_entries_with_a_role_and_slots() {
        let got = parse_workers(
            "ssh -o BatchMode=yes box1 /usr/games/stockfish *16; \
             opponent: builtin *2;evaluator:'/opt/my engine' --x=';'; ;",
        )
        .expect("valid");
        let want = [
            (None, "ssh -o BatchMode=yes box1 /usr/games/stockfish", 16),
            (Some(Role::Opponent), "builtin", 2),
            (Some(Role::Evaluator), "'/opt/my engine' --x=';'", 1),
        ];
        let got: Vec<_> = got
            .iter()
            .map(|e| (e.role, e.command.as_str(), e.slots))
            .collect();
        assert_eq!(got, want);
        let rooted = parse_workers("ROOT: /usr/games/stockfish; builtin *3").expect("valid");
        assert!(rooted[0].root && rooted[0].role == Some(Role::Evaluator));
        assert!(!rooted[1].root && rooted[1].slots == 3);
        // A quoted `*2` is part of the command.
        let quoted = parse_workers("'/opt/x *2'").expect("valid");
        let drive = parse_workers("C:/engines/sf.exe *2").expect("a drive letter");
        assert_eq!(
            (drive[0].command.as_str(), drive[0].slots),
            ("C:/engines/sf.exe", 2)
        );
        assert_eq!(
            (quoted[0].command.as_str(), quoted[0].slots),
            ("'/opt/x *2'", 1)
        );
        let bad = [
            ("builtin *0", "*1 to *1024"),
            ("builtin *x", "'*x'"),
            ("evaluator: *3", "empty"),
            ("'open", "unclosed"),
            ("evaluator: builtin", "opponent role"),
            ("opponent: builtin *2", "evaluator role"),
            (
                "eval: builtin",
                "'eval:' is not evaluator:, opponent: or root:",
            ),
            ("root: builtin *2; builtin", "one child"),
            (
                "root: builtin; root: builtin; builtin",
                "more than one root",
            ),
            ("root: builtin; opponent: builtin", "evaluator role"),
        ];
        for (text, want) in bad {
            let e = parse_workers(text).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
