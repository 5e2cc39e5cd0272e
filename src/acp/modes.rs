//! The modes and models a session offers: the legacy modes API (`session/set_mode`) and the
//! config options (`session/set_config_option`) say the same two choices.

use agent_client_protocol_schema::v1::{
    SessionConfigKind, SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelect,
    SessionConfigSelectOption, SessionMode, SessionModeState,
};

/// The permission modes a session offers (`session/set_mode`, the `mode` config option).
pub const MODES: &[(&str, &str)] = &[
    ("default", "Default: ask before tools that change things"),
    ("acceptEdits", "Accept edits"),
    ("plan", "Plan only"),
    ("dontAsk", "Don't ask: deny what is not allowed"),
    ("bypassPermissions", "Bypass permissions"),
];

/// The models offered by the `model` config option (aliases the CLI resolves).
pub const MODELS: &[&str] = &["default", "sonnet", "opus", "haiku"];

/// The modes offered here (the CLI refuses `bypassPermissions` as root outside a sandbox).
pub fn modes() -> Vec<(&'static str, &'static str)> {
    // bypassPermissions is refused by the CLI when running as root outside a sandbox.
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
        && std::env::var_os("IS_SANDBOX").is_none();
    MODES
        .iter()
        .copied()
        .filter(|(m, _)| !(root && *m == "bypassPermissions"))
        .collect()
}

/// The modes, `current` the current one.
pub fn mode_state(current: &str) -> SessionModeState {
    SessionModeState::new(
        current.to_owned(),
        modes()
            .into_iter()
            .map(|(id, d)| SessionMode::new(id, id).description(d.to_owned()))
            .collect(),
    )
}

/// The config options: the mode and the model, with their current values.
pub fn config_options(mode: &str, model: &str) -> Vec<SessionConfigOption> {
    let mode_opts: Vec<SessionConfigSelectOption> = modes()
        .into_iter()
        .map(|(id, d)| SessionConfigSelectOption::new(id, id).description(d.to_owned()))
        .collect();
    let model_opts: Vec<SessionConfigSelectOption> = MODELS
        .iter()
        .map(|m| SessionConfigSelectOption::new(*m, *m))
        .collect();
    vec![
        SessionConfigOption::new(
            "mode",
            "Mode",
            SessionConfigKind::Select(SessionConfigSelect::new(mode.to_owned(), mode_opts)),
        )
        .category(SessionConfigOptionCategory::Mode),
        SessionConfigOption::new(
            "model",
            "Model",
            SessionConfigKind::Select(SessionConfigSelect::new(model.to_owned(), model_opts)),
        )
        .category(SessionConfigOptionCategory::Model),
    ]
}
