//! Enums with a name per variant, written once: the shell, the settings
//! table and older records spell a variant by its name, and
//! [`named_enum!`] derives the name, the list of all variants and the
//! lookup by name from one `Variant => "name"` list.

/// An enum whose variants each have a name.
pub trait NamedEnum: Copy + Eq + Sized + Sync + 'static {
    /// Every variant, in the order its names are listed.
    const VARIANTS: &'static [Self];

    fn name(self) -> &'static str;

    /// The variant spelled `name` exactly.
    fn from_name(name: &str) -> Option<Self> {
        Self::VARIANTS.iter().copied().find(|v| v.name() == name)
    }

    /// Every variant's name, joined by `sep`: for help and errors.
    fn names(sep: &str) -> String {
        let names: Vec<&str> = Self::VARIANTS.iter().map(|v| v.name()).collect();
        names.join(sep)
    }
}

/// Implements [`NamedEnum`] for an enum from its `Variant => "name"`
/// list, with inherent `ALL`, `name` and `from_name` so callers need not
/// import the trait. A variant left out of the list does not compile.
macro_rules! named_enum {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant, in the order its names are listed.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            /// The variant spelled `name` exactly.
            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }

        impl $crate::model::NamedEnum for $ty {
            const VARIANTS: &'static [Self] = &<$ty>::ALL;

            fn name(self) -> &'static str {
                <$ty>::name(self)
            }

            fn from_name(name: &str) -> Option<Self> {
                <$ty>::from_name(name)
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    use super::NamedEnum;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Tide {
        Low,
        High,
    }
    named_enum!(Tide { Low => "low", High => "high-water" });

    #[test]
    fn names_round_trip_and_list_in_order() {
        for t in Tide::ALL {
            assert_eq!(Tide::from_name(t.name()), Some(t));
        }
        assert_eq!(<Tide as NamedEnum>::names("|"), "low|high-water");
        assert_eq!(Tide::from_name("High"), None, "names are exact");
        assert_eq!(<Tide as NamedEnum>::from_name("low"), Some(Tide::Low));
    }
}
