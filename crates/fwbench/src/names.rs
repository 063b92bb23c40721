//! Text names of the small choice enums (workload, sender, sink): one table per enum
//! gives `as_str`, `NAMES` and `FromStr` with a message that lists the choices.

/// `named!(Type, "what", { Variant => "name", … })`.
macro_rules! named {
    ($ty:ident, $what:literal, { $($var:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$var => $name),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($name => Ok($ty::$var),)+
                    _ => Err(format!(
                        "unknown {} '{s}' (expected one of: {})",
                        $what,
                        Self::NAMES.join(", ")
                    )),
                }
            }
        }
    };
}

pub(crate) use named;
