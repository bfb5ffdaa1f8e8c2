//! `model.json` on disk: read for `--model`, written by the commands that train. Scoring and
//! training both need it, and neither should depend on the other for it.

use std::path::Path;

use stencil_operators::page_models::model::Model;

/// Loads `--model`, or the model embedded in the binary.
pub fn load_model(path: Option<&Path>) -> Result<Model, String> {
    match path {
        Some(path) => {
            let json =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Model::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
        }
        None => Ok(Model::default_model()),
    }
}

/// Writes `model.json` under a temporary name and renames it, like the tables.
pub fn write_model(out: &Path, model: &Model) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let partial = out.join(".model.json.partial");
    let done = out.join("model.json");
    std::fs::write(&partial, model.to_json()).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))
}
