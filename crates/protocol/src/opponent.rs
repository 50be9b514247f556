//! The `UCI_Opponent` option's value: who the engine plays.
//!
//! The UCI specification writes it `[GM|IM|FM|WGM|WIM|none] [<elo>|none]
//! [computer|human] <name>`. GUIs send it as they please within that:
//! Arena `GM 2800 human Garry Kasparov`, cutechess `none none human Name`,
//! python-chess and lichess-bot `BOT 2650 computer name` or `none 1500
//! human name` (a lichess title such as `BOT`, `LM` or `NM` in the title's
//! place). Any one word is taken as a title; the name may be empty or
//! hold spaces.

use std::{fmt, str::FromStr};

/// Who the opponent is, as a GUI described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UciOpponent {
    /// `None` for `none`.
    pub title: Option<String>,
    /// `None` for `none`.
    pub elo: Option<u32>,
    pub human: bool,
    pub name: String,
}

/// A `UCI_Opponent` value that does not follow the specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{value}' is not '<title|none> <elo|none> <computer|human> <name>': {reason}")]
pub struct OpponentError {
    pub value: String,
    pub reason: &'static str,
}

impl FromStr for UciOpponent {
    type Err = OpponentError;

    fn from_str(value: &str) -> Result<UciOpponent, OpponentError> {
        let bad = |reason| OpponentError {
            value: value.to_owned(),
            reason,
        };
        let mut words = value.split_whitespace();
        let (Some(title), Some(elo), Some(kind)) = (words.next(), words.next(), words.next())
        else {
            return Err(bad("fewer than three words"));
        };
        let none = |w: &str| w.eq_ignore_ascii_case("none");
        let elo = if none(elo) {
            None
        } else {
            Some(
                elo.parse::<u32>()
                    .map_err(|_| bad("the rating is neither a number nor 'none'"))?,
            )
        };
        let human = if kind.eq_ignore_ascii_case("human") {
            true
        } else if kind.eq_ignore_ascii_case("computer") {
            false
        } else {
            return Err(bad("the third word is neither 'computer' nor 'human'"));
        };
        Ok(UciOpponent {
            title: (!none(title)).then(|| title.to_owned()),
            elo,
            human,
            name: words.collect::<Vec<_>>().join(" "),
        })
    }
}

impl fmt::Display for UciOpponent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let elo = self.elo.map_or("none".to_owned(), |e| e.to_string());
        write!(
            f,
            "{} {elo} {}",
            self.title.as_deref().unwrap_or("none"),
            if self.human { "human" } else { "computer" }
        )?;
        if !self.name.is_empty() {
            write!(f, " {}", self.name)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_real_guis_send_parses() {
        let cases = [
            // Arena.
            (
                "GM 2800 human Garry Kasparov",
                Some("GM"),
                Some(2800),
                true,
                "Garry Kasparov",
            ),
            // cutechess.
            ("none none human Name", None, None, true, "Name"),
            (
                "none none computer Stockfish 15.1",
                None,
                None,
                false,
                "Stockfish 15.1",
            ),
            // python-chess / lichess-bot.
            (
                "BOT 2650 computer some-bot",
                Some("BOT"),
                Some(2650),
                false,
                "some-bot",
            ),
            ("none 1500 human test", None, Some(1500), true, "test"),
            ("NONE 1500 Human", None, Some(1500), true, ""),
        ];
        for (text, title, elo, human, name) in cases {
            let o: UciOpponent = text.parse().expect(text);
            assert_eq!(
                (o.title.as_deref(), o.elo, o.human, o.name.as_str()),
                (title, elo, human, name),
                "{text}"
            );
        }
        let o: UciOpponent = "GM 2800 human Garry  Kasparov".parse().expect("parses");
        assert_eq!(o.to_string(), "GM 2800 human Garry Kasparov");
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        for (text, reason) in [
            ("", "fewer than three"),
            ("GM 2800", "fewer than three"),
            ("GM strong human X", "neither a number"),
            ("GM -5 human X", "neither a number"),
            ("GM 2800 alien X", "neither 'computer' nor 'human'"),
        ] {
            let e = text.parse::<UciOpponent>().expect_err(text).to_string();
            assert!(e.contains(reason) && e.contains(text), "{e}");
        }
    }
}
