//! The terminal conventions of the pretty view: whether to color (`--color`, `NO_COLOR`,
//! `CLICOLOR`, `CLICOLOR_FORCE`, `TERM=dumb`, a terminal on stdout), how wide to write
//! (`--width`, `COLUMNS`, the terminal), Unicode or ASCII glyphs (`--ascii`, the locale), and the
//! SGR sequences of each role (the only escape sequences the view ever writes).

use anstyle::{AnsiColor, Effects, Style};

use crate::sink::choice::Choice;

/// `--color`: when to color.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Color when stdout is a terminal and the environment does not say otherwise.
    #[default]
    Auto,
    /// Always color (also into a pipe: `| less -R`).
    Always,
    /// Never color.
    Never,
}

impl Choice for ColorChoice {
    const CHOICES: &'static [(&'static str, Self, &'static str)] = &[
        (
            "auto",
            ColorChoice::Auto,
            "Color when stdout is a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb say no (CLICOLOR_FORCE=1 says yes)",
        ),
        ("always", ColorChoice::Always, "Always color"),
        ("never", ColorChoice::Never, "Never color"),
    ];
}

/// `--thinking`: how much of the model's thinking to show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Thinking {
    /// Not at all.
    Hide,
    /// Its first line, dimmed, with the number of lines left out.
    #[default]
    Summary,
    /// All of it, dimmed.
    Full,
}

impl Choice for Thinking {
    const CHOICES: &'static [(&'static str, Self, &'static str)] = &[
        ("hide", Thinking::Hide, "Do not show thinking"),
        (
            "summary",
            Thinking::Summary,
            "The first line of each thinking block, dimmed",
        ),
        ("full", Thinking::Full, "All thinking, dimmed and wrapped"),
    ];
}

/// Whether to color: `choice`, else (auto) the environment (`env` reads a variable) and
/// whether stdout is a terminal. `NO_COLOR` counts only when not empty (no-color.org);
/// `CLICOLOR_FORCE` (not empty, not `0`) wins over `NO_COLOR`, `CLICOLOR=0` and a pipe, as
/// in the CLICOLOR convention; `TERM=dumb` turns color off unless forced.
pub fn use_color(choice: ColorChoice, tty: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => return true,
        ColorChoice::Never => return false,
        ColorChoice::Auto => {}
    }
    if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        return true;
    }
    if set("NO_COLOR").is_some() {
        return false;
    }
    if set("CLICOLOR").is_some_and(|v| v == "0") {
        return false;
    }
    if set("TERM").is_some_and(|t| t == "dumb") {
        return false;
    }
    tty
}

/// The width to write at, in cells: `flag` (`--width`), else `COLUMNS` when it is a positive
/// number, else the terminal's (`terminal`), else 100; never below 20.
pub fn width(
    flag: Option<usize>,
    terminal: Option<usize>,
    env: &dyn Fn(&str) -> Option<String>,
) -> usize {
    let columns = env("COLUMNS").and_then(|c| c.trim().parse::<usize>().ok());
    flag.or(columns.filter(|&c| c > 0))
        .or(terminal.filter(|&c| c > 0))
        .unwrap_or(100)
        .max(20)
}

/// Whether the locale says UTF-8: the first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set and
/// not empty names a UTF-8 charset. With none set, UTF-8 is assumed (the norm of today's
/// terminals and CI logs); `C`/`POSIX` or another charset mean ASCII.
pub fn utf8_locale(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let v = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()));
    match v {
        None => true,
        Some(v) => {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        }
    }
}

/// The glyphs the view draws with.
#[derive(Debug, Clone, Copy)]
pub struct Glyphs {
    pub(super) call: &'static str,
    pub(super) result: &'static str,
    pub(super) text: &'static str,
    pub(super) thinking: &'static str,
    pub(super) prompt: &'static str,
    pub(super) bar: &'static str,
    pub(super) ellipsis: &'static str,
    pub(super) warn: &'static str,
    pub(super) error: &'static str,
    pub(super) note: &'static str,
    pub(super) rule: &'static str,
    pub(super) todo: [&'static str; 3],
    pub(super) minus: &'static str,
    pub(super) arrow: &'static str,
    pub(super) dot: &'static str,
    pub(super) newline: &'static str,
}

impl Glyphs {
    /// Unicode glyphs.
    pub const UNICODE: Glyphs = Glyphs {
        call: "⏺",
        result: "⎿",
        text: "●",
        thinking: "∴",
        prompt: "›",
        bar: "│",
        ellipsis: "…",
        warn: "⚠",
        error: "✗",
        note: "·",
        rule: "─",
        todo: ["☐", "◐", "☑"],
        minus: "−",
        arrow: "→",
        dot: "·",
        newline: "⏎",
    };
    /// ASCII glyphs (`--ascii`, or a locale that is not UTF-8).
    pub const ASCII: Glyphs = Glyphs {
        call: "*",
        result: ">",
        text: "o",
        thinking: "~",
        prompt: ">",
        bar: "|",
        ellipsis: "...",
        warn: "!",
        error: "x",
        note: "-",
        rule: "-",
        todo: ["[ ]", "[~]", "[x]"],
        minus: "-",
        arrow: "->",
        dot: "-",
        newline: "\\n",
    };
}

/// What a piece of the view is, for its color.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Assistant text.
    Text,
    /// A heading in assistant text.
    Heading,
    /// A code block line in assistant text.
    Code,
    /// Thinking.
    Thinking,
    /// Secondary information.
    Dim,
    /// A tool's name.
    Tool,
    /// A tool's main argument.
    Arg,
    /// The prompt.
    Prompt,
    /// A failure.
    Error,
    /// A warning.
    Warn,
    /// A success.
    Ok,
    /// An added line.
    Added,
    /// A removed line.
    Removed,
    /// A diff hunk header.
    Hunk,
    /// A subagent's label (the gutter).
    Label,
    /// An unsafe character shown in notation.
    Escaped,
}

const ROLES: usize = 16;

impl Role {
    fn style(self) -> Style {
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        match self {
            Role::Text => Style::new(),
            Role::Heading => Style::new().bold(),
            Role::Code => fg(AnsiColor::Cyan),
            Role::Thinking => Style::new().effects(Effects::DIMMED | Effects::ITALIC),
            Role::Dim => Style::new().dimmed(),
            Role::Tool => Style::new().bold(),
            Role::Arg => fg(AnsiColor::Blue),
            Role::Prompt => fg(AnsiColor::Green).bold(),
            Role::Error => fg(AnsiColor::Red),
            Role::Warn => fg(AnsiColor::Yellow),
            Role::Ok => fg(AnsiColor::Green),
            Role::Added => fg(AnsiColor::Green),
            Role::Removed => fg(AnsiColor::Red),
            Role::Hunk => fg(AnsiColor::Cyan).dimmed(),
            Role::Label => fg(AnsiColor::Magenta),
            Role::Escaped => Style::new().invert(),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Each role's SGR start sequence (empty without color) and the reset.
#[derive(Debug, Clone)]
pub struct Palette {
    starts: [String; ROLES],
    reset: &'static str,
}

impl Palette {
    /// The palette with or without color.
    pub fn new(color: bool) -> Palette {
        let all = [
            Role::Text,
            Role::Heading,
            Role::Code,
            Role::Thinking,
            Role::Dim,
            Role::Tool,
            Role::Arg,
            Role::Prompt,
            Role::Error,
            Role::Warn,
            Role::Ok,
            Role::Added,
            Role::Removed,
            Role::Hunk,
            Role::Label,
            Role::Escaped,
        ];
        let mut starts: [String; ROLES] = Default::default();
        for r in all {
            if color {
                starts[r.index()] = r.style().render().to_string();
            }
        }
        Palette {
            starts,
            reset: if color { "\x1b[0m" } else { "" },
        }
    }

    /// The sequence that starts `role` ("" without color or for plain text).
    pub fn start(&self, role: Role) -> &str {
        &self.starts[role.index()]
    }

    /// The sequence that ends a styled piece ("" without color).
    pub fn reset(&self, role: Role) -> &str {
        if self.starts[role.index()].is_empty() {
            ""
        } else {
            self.reset
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn color_rules() {
        let auto = |vars: &[(&str, &str)], tty| use_color(ColorChoice::Auto, tty, &env(vars));
        assert!(auto(&[], true));
        assert!(!auto(&[], false));
        assert!(!auto(&[("NO_COLOR", "1")], true));
        assert!(
            auto(&[("NO_COLOR", "")], true),
            "an empty NO_COLOR counts as unset"
        );
        assert!(!auto(&[("CLICOLOR", "0")], true));
        assert!(auto(&[("CLICOLOR_FORCE", "1")], false));
        assert!(auto(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false));
        assert!(!auto(&[("CLICOLOR_FORCE", "0")], false));
        assert!(!auto(&[("TERM", "dumb")], true));
        assert!(use_color(
            ColorChoice::Always,
            false,
            &env(&[("NO_COLOR", "1")])
        ));
        assert!(!use_color(
            ColorChoice::Never,
            true,
            &env(&[("CLICOLOR_FORCE", "1")])
        ));
    }

    #[test]
    fn width_and_locale_rules() {
        assert_eq!(width(Some(60), Some(80), &env(&[("COLUMNS", "70")])), 60);
        assert_eq!(width(None, Some(80), &env(&[("COLUMNS", "70")])), 70);
        assert_eq!(width(None, Some(80), &env(&[("COLUMNS", "x")])), 80);
        assert_eq!(width(None, None, &env(&[])), 100);
        assert_eq!(width(Some(3), None, &env(&[])), 20);
        assert!(utf8_locale(&env(&[])));
        assert!(utf8_locale(&env(&[("LANG", "en_US.UTF-8")])));
        assert!(!utf8_locale(&env(&[
            ("LC_ALL", "C"),
            ("LANG", "en_US.UTF-8")
        ])));
        assert!(utf8_locale(&env(&[("LC_ALL", ""), ("LANG", "C.utf8")])));
        assert!(!utf8_locale(&env(&[("LANG", "POSIX")])));
    }

    #[test]
    fn palette_is_empty_without_color() {
        let p = Palette::new(false);
        assert_eq!((p.start(Role::Error), p.reset(Role::Error)), ("", ""));
        let p = Palette::new(true);
        assert!(p.start(Role::Error).starts_with("\x1b["));
        assert_eq!(p.reset(Role::Text), "");
    }
}
