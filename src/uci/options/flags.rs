//! The options as `uci-options.md` describes them, and as command-line
//! flags.

use mpcmc_protocol::OptionType;

use crate::uci::options::table::TABLE;

/// Each option's row of `uci-options.md`'s first table: the cells
/// (`""`, name, type, default, range, meaning, …), backticks removed;
/// read once. The document is the one place the options are described.
pub(super) fn documented_rows() -> &'static [Vec<String>] {
    static ROWS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        include_str!("../../../uci-options.md")
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with("| `"))
            .map(|l| {
                l.replace("\\|", "/")
                    .split('|')
                    .map(|c| c.trim().replace('`', ""))
                    .collect()
            })
            .collect()
    })
}

/// One line of help for option `name`: the first sentence of its meaning,
/// its default and range.
pub fn flag_help(name: &str) -> String {
    let Some(row) = documented_rows()
        .iter()
        .find(|r| r.get(1).is_some_and(|n| n == name))
    else {
        return format!("Sets the UCI option {name}");
    };
    const MOST: usize = 160;
    let meaning = row.get(5).map_or("", String::as_str);
    // The first sentence ("e.g. " ends none), at most MOST characters.
    let end = meaning
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| !meaning[..i].ends_with("e.g") && !meaning[..i].ends_with("i.e"))
        .unwrap_or(meaning.len());
    let mut first = meaning[..end].trim_end_matches('.').to_owned();
    if first.chars().count() > MOST {
        let cut: String = first.chars().take(MOST).collect();
        let words = cut[..cut.rfind(' ').unwrap_or(cut.len())].trim_end_matches([',', ';', ':']);
        first = format!("{words}…");
    } else {
        first.push('.');
    }
    let mut help = format!("{name}: {first}");
    match (row[3].as_str(), row[4].as_str()) {
        ("", "") => {}
        (default, "") => help.push_str(&format!(" Default {default}.")),
        (default, range) => help.push_str(&format!(" Default {default}; {range}.")),
    }
    help
}

/// The options that are also command-line flags: all but the buttons (an
/// action, not a setting).
pub fn flag_names() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .filter(|d| !matches!((d.kind)(), OptionType::Button))
        .map(|d| d.name)
}

/// The command-line flag of an option: `ChildNodes` → `child-nodes`,
/// `UCI_Chess960` → `uci-chess960`.
pub fn flag_name(option: &str) -> String {
    let mut flag = String::new();
    let mut prev_lower = false;
    for c in option.chars() {
        if c == '_' {
            flag.push('-');
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            flag.push('-');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        flag.push(c.to_ascii_lowercase());
    }
    flag
}
