//! Writes on a remote account: read-only until the user says so. The toggle asks first,
//! naming the account, before the backend takes writes for the rest of this run; turning
//! them off again needs no question. A write action while read-only is refused here,
//! before any editor opens, with the key that allows writes.

use crate::error::Error;
use crate::tui::action::Action;
use crate::tui::effect::Effect;
use crate::tui::state::{App, Confirmed, Layer};

/// The actions that write to the account (an item, a script, the indexing policy).
const WRITES: [Action; 5] = [
    Action::NewItem,
    Action::EditItem,
    Action::DeleteItem,
    Action::ExecuteScript,
    Action::ApplyIndex,
];

/// The key that toggles writes, for messages ("W"), or the palette entry's name.
fn toggle_key(app: &App) -> String {
    app.keymap
        .key_for(app.mode(), Action::ToggleWrites)
        .map_or_else(
            || format!("the palette's {}", Action::ToggleWrites.name()),
            |k| k.to_string(),
        )
}

fn account(app: &App) -> String {
    app.account
        .clone()
        .unwrap_or_else(|| "this account".to_string())
}

/// Refuses a write action on a read-only remote session, saying how to allow writes; true
/// when it did.
pub fn refused(app: &mut App, action: Action) -> bool {
    if !(app.read_only && app.write_switch && WRITES.contains(&action)) {
        return false;
    }
    // The key first: the status line cuts a long message at its end.
    app.error(format!(
        "read-only: press {} to allow writes for this run (asks first), or start with \
         --read-write; nothing was sent to {}",
        toggle_key(app),
        account(app)
    ));
    true
}

/// Asks before allowing writes; makes the session read-only again at once.
pub fn toggle(app: &mut App) -> Vec<Effect> {
    if !app.write_switch {
        app.info(if app.read_only {
            "this store's writes cannot be switched on: its media or permissions forbid them"
        } else {
            "writes are always on for a store on this machine; only a remote account is read-only"
        });
        return Vec::new();
    }
    if !app.read_only {
        return vec![Effect::SetWrites { on: false }];
    }
    app.layers.push(Layer::Confirm {
        text: format!(
            "Allow writes to {} for this session?\nCreates, edits, deletes and scripts will \
             change the account and be billed. Writes stay on until you quit or press {} again.",
            account(app),
            toggle_key(app)
        ),
        on_yes: Confirmed::SetWrites { on: true },
    });
    Vec::new()
}

/// The backend switched (or could not).
pub fn on_set(app: &mut App, on: bool, result: Result<(), Error>) {
    match result {
        Ok(()) => {
            app.read_only = !on;
            let key = toggle_key(app);
            if on {
                app.info(format!(
                    "read-write: writes go to {} for this run ({key} makes it read-only again)",
                    account(app)
                ));
            } else {
                app.info(format!("read-only again ({key} allows writes)"));
            }
        }
        Err(e) => app.error(format!("writes not switched: {}", e.message)),
    }
}
