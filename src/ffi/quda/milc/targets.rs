//! The two stopping targets of MILC's solves, as QUDA 9521952's
//! lib/milc_interface.cpp takes them (`setInvertParams`): the L2 one
//! (`target_residual`) and MILC's heavy-quark one
//! (`target_fermilab_residual`); a zero target is off, both zero is an
//! error ("requesting zero residual"). Checked here so that a message
//! names MILC's arguments.

use crate::error::{Error, Result};

/// Checks the targets: finite, not negative, not both zero.
pub(crate) fn check_targets(target_residual: f64, target_fermilab_residual: f64) -> Result<()> {
    for (t, name) in [
        (target_residual, "target_residual"),
        (target_fermilab_residual, "target_fermilab_residual"),
    ] {
        if !(0.0..1.0).contains(&t) {
            return Err(Error::InvalidArgument(format!(
                "{name} = {t}: a relative target in [0, 1) (0: off)"
            )));
        }
    }
    if target_residual == 0.0 && target_fermilab_residual == 0.0 {
        return Err(Error::InvalidArgument(
            "target_residual = 0 and target_fermilab_residual = 0: requesting zero residual (as \
             QUDA refuses it)"
                .into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_named_as_milc_passes_them() {
        assert!(check_targets(1e-8, 0.0).is_ok() && check_targets(0.0, 5e-7).is_ok());
        let e = check_targets(0.0, 0.0).unwrap_err().to_string();
        assert!(e.contains("requesting zero residual"), "{e}");
        let e = check_targets(f64::NAN, 1e-6).unwrap_err().to_string();
        assert!(e.contains("target_residual = NaN"), "{e}");
        let e = check_targets(1e-8, -1.0).unwrap_err().to_string();
        assert!(e.contains("target_fermilab_residual = -1"), "{e}");
    }
}
