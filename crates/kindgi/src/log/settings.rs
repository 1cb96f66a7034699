//! How the log is set from the environment: `KINDGI_LOG_FORMAT`,
//! `KINDGI_LOG_LEVEL`, and `KINDGI_LOG_LEVELS`, a level per subsystem
//! (`pack=warn,pack.tool=debug`) that a dotted subsystem inherits from its
//! nearest parent. A value that can't be honoured is refused, naming it,
//! as the reference services refuse it (`config-invalid`).

use super::record::Level;

/// The levels' names, most severe first, as the messages list them.
const LEVEL_NAMES: &str = "error, warn, info, debug, trace";

/// The log's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogSettings {
    /// One JSON object a line, else readable lines.
    pub(crate) json: bool,
    /// The level of a subsystem `levels` doesn't name.
    pub(crate) level: Level,
    /// Each named subsystem's own level.
    pub(crate) levels: Vec<(String, Level)>,
}

impl LogSettings {
    /// The defaults: JSON, `info`, no subsystem's own.
    pub(crate) fn new(json: bool, level: Level) -> Self {
        Self {
            json,
            level,
            levels: Vec::new(),
        }
    }

    /// The settings `var` gives (`std::env::var`, or a test's map), for a
    /// stderr that `on_terminal` or not.
    pub(crate) fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        on_terminal: bool,
    ) -> Result<Self, String> {
        let format = var("KINDGI_LOG_FORMAT").unwrap_or_default();
        let json = match format.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => !on_terminal,
            "json" => true,
            "pretty" => false,
            _ => {
                return Err(format!(
                    "KINDGI_LOG_FORMAT must be auto, json or pretty, got \"{format}\"."
                ));
            }
        };
        let level = match var("KINDGI_LOG_LEVEL") {
            Some(raw) if !raw.trim().is_empty() => parse_level(&raw).ok_or_else(|| {
                format!("KINDGI_LOG_LEVEL must be one of {LEVEL_NAMES}, got \"{raw}\".")
            })?,
            _ => Level::Info,
        };
        let levels = parse_levels(&var("KINDGI_LOG_LEVELS").unwrap_or_default())
            .map_err(|problem| format!("KINDGI_LOG_LEVELS: {problem}."))?;
        Ok(Self {
            json,
            level,
            levels,
        })
    }

    /// The level of `subsystem`: its own, else its nearest dotted parent's
    /// (`pack` covers `pack.tool`), else the default.
    pub(crate) fn level_for(&self, subsystem: &str) -> Level {
        let mut name = subsystem;
        loop {
            if let Some((_, level)) = self.levels.iter().find(|(n, _)| n == name) {
                return *level;
            }
            match name.rfind('.') {
                Some(dot) => name = &name[..dot],
                None => return self.level,
            }
        }
    }
}

/// A level's name, case and spaces aside.
fn parse_level(raw: &str) -> Option<Level> {
    Level::parse(&raw.trim().to_ascii_lowercase())
}

/// `KINDGI_LOG_LEVELS`: a comma list of `subsystem=level`; empty entries
/// are none. A later entry for a subsystem wins.
fn parse_levels(raw: &str) -> Result<Vec<(String, Level)>, String> {
    let mut levels: Vec<(String, Level)> = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let parsed = entry.split_once('=').and_then(|(subsystem, level)| {
            let subsystem = subsystem.trim();
            (!subsystem.is_empty()).then_some(())?;
            Some((subsystem.to_owned(), parse_level(level)?))
        });
        let Some((subsystem, level)) = parsed else {
            return Err(format!(
                "\"{entry}\" isn't subsystem=level (levels: {LEVEL_NAMES})"
            ));
        };
        levels.retain(|(name, _)| *name != subsystem);
        levels.push((subsystem, level));
    }
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<LogSettings, String> {
        LogSettings::from_vars(
            |name| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            },
            false,
        )
    }

    #[test]
    fn defaults_and_spellings() {
        assert_eq!(settings(&[]), Ok(LogSettings::new(true, Level::Info)));
        let set = settings(&[
            ("KINDGI_LOG_FORMAT", " Pretty "),
            ("KINDGI_LOG_LEVEL", " WARN "),
            ("KINDGI_LOG_LEVELS", "pack=debug, ,pack.tool = trace,"),
        ])
        .expect("valid");
        assert!(!set.json);
        assert_eq!(set.level, Level::Warn);
        assert_eq!(set.level_for("pack"), Level::Debug);
        assert_eq!(set.level_for("pack.tool"), Level::Trace);
        assert_eq!(set.level_for("pack.check"), Level::Debug);
        assert_eq!(set.level_for("pack.tool.deep"), Level::Trace);
        assert_eq!(set.level_for("billing"), Level::Warn);
        assert_eq!(set.level_for("packing"), Level::Warn);
    }

    #[test]
    fn what_cannot_be_honoured_is_named() {
        let cases = [
            (
                ("KINDGI_LOG_LEVEL", "verbose"),
                "KINDGI_LOG_LEVEL must be one of error, warn, info, debug, trace, got \"verbose\".",
            ),
            (
                ("KINDGI_LOG_LEVELS", "pack=debug,tool"),
                "KINDGI_LOG_LEVELS: \"tool\" isn't subsystem=level (levels: error, warn, info, debug, trace).",
            ),
            (
                ("KINDGI_LOG_LEVELS", "=debug"),
                "KINDGI_LOG_LEVELS: \"=debug\" isn't subsystem=level (levels: error, warn, info, debug, trace).",
            ),
            (
                ("KINDGI_LOG_LEVELS", "pack=loud"),
                "KINDGI_LOG_LEVELS: \"pack=loud\" isn't subsystem=level (levels: error, warn, info, debug, trace).",
            ),
            (
                ("KINDGI_LOG_FORMAT", "xml"),
                "KINDGI_LOG_FORMAT must be auto, json or pretty, got \"xml\".",
            ),
        ];
        for (var, message) in cases {
            assert_eq!(settings(&[var]), Err(message.to_owned()), "{var:?}");
        }
    }
}
