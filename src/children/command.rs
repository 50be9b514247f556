//! Engine command lines, split into argv with shell-words rules.
//!
//! `Evaluator=/usr/games/stockfish` or `Opponent='/opt/my engine/bin' --uci`
//! name a program and its arguments. They are split the way a POSIX shell
//! splits words (quotes and backslashes), but never run through a shell: no
//! expansion, no pipes, nothing a GUI user did not type.

use std::fmt;

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

impl fmt::Display for EngineCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
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
}
