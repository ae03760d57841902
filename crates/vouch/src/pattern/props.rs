//! `\p{..}` names: the ones ECMA-262 defines, matched strictly, mapped to
//! the regex crate's.
//!
//! ECMA-262 matches property names and values exactly (case and `_`
//! matter: `\p{lu}` is a SyntaxError); the regex crate matches loosely, so
//! nothing is passed through: each accepted spelling is a row here and the
//! emitted name is the regex crate's canonical one. A name the regex crate
//! lacks (`Changes_When_NFKC_Casefolded`) is left out, so refused.
//!
//! The sets are the regex crate's Unicode 16.0 tables. ECMA-262 leaves the
//! Unicode version to the engine, so a property is accepted only where a
//! newer version adds code points and changes none that 16.0 assigned
//! ([`VERSION_DEPENDENT`] are refused). Script
//! and Script_Extensions values are refused for now: their alias lists
//! have not been checked against the regex crate's tables.

/// General_Category values and aliases (PropertyValueAliases.txt, `gc`),
/// each with the regex crate's canonical long name. `Cs` (`Surrogate`) is
/// missing on purpose: the regex crate has no table for it (its tables
/// leave the surrogates out), so it is refused rather than guessed.
const GENERAL_CATEGORY: &[(&str, &str)] = &[
    ("C", "gc=Other"),
    ("Other", "gc=Other"),
    ("Cc", "gc=Control"),
    ("Control", "gc=Control"),
    ("cntrl", "gc=Control"),
    ("Cf", "gc=Format"),
    ("Format", "gc=Format"),
    ("Cn", "gc=Unassigned"),
    ("Unassigned", "gc=Unassigned"),
    ("Co", "gc=Private_Use"),
    ("Private_Use", "gc=Private_Use"),
    ("L", "gc=Letter"),
    ("Letter", "gc=Letter"),
    ("LC", "gc=Cased_Letter"),
    ("Cased_Letter", "gc=Cased_Letter"),
    ("Ll", "gc=Lowercase_Letter"),
    ("Lowercase_Letter", "gc=Lowercase_Letter"),
    ("Lm", "gc=Modifier_Letter"),
    ("Modifier_Letter", "gc=Modifier_Letter"),
    ("Lo", "gc=Other_Letter"),
    ("Other_Letter", "gc=Other_Letter"),
    ("Lt", "gc=Titlecase_Letter"),
    ("Titlecase_Letter", "gc=Titlecase_Letter"),
    ("Lu", "gc=Uppercase_Letter"),
    ("Uppercase_Letter", "gc=Uppercase_Letter"),
    ("M", "gc=Mark"),
    ("Mark", "gc=Mark"),
    ("Combining_Mark", "gc=Mark"),
    ("Mc", "gc=Spacing_Mark"),
    ("Spacing_Mark", "gc=Spacing_Mark"),
    ("Me", "gc=Enclosing_Mark"),
    ("Enclosing_Mark", "gc=Enclosing_Mark"),
    ("Mn", "gc=Nonspacing_Mark"),
    ("Nonspacing_Mark", "gc=Nonspacing_Mark"),
    ("N", "gc=Number"),
    ("Number", "gc=Number"),
    ("Nd", "gc=Decimal_Number"),
    ("Decimal_Number", "gc=Decimal_Number"),
    ("digit", "gc=Decimal_Number"),
    ("Nl", "gc=Letter_Number"),
    ("Letter_Number", "gc=Letter_Number"),
    ("No", "gc=Other_Number"),
    ("Other_Number", "gc=Other_Number"),
    ("P", "gc=Punctuation"),
    ("Punctuation", "gc=Punctuation"),
    ("punct", "gc=Punctuation"),
    ("Pc", "gc=Connector_Punctuation"),
    ("Connector_Punctuation", "gc=Connector_Punctuation"),
    ("Pd", "gc=Dash_Punctuation"),
    ("Dash_Punctuation", "gc=Dash_Punctuation"),
    ("Pe", "gc=Close_Punctuation"),
    ("Close_Punctuation", "gc=Close_Punctuation"),
    ("Pf", "gc=Final_Punctuation"),
    ("Final_Punctuation", "gc=Final_Punctuation"),
    ("Pi", "gc=Initial_Punctuation"),
    ("Initial_Punctuation", "gc=Initial_Punctuation"),
    ("Po", "gc=Other_Punctuation"),
    ("Other_Punctuation", "gc=Other_Punctuation"),
    ("Ps", "gc=Open_Punctuation"),
    ("Open_Punctuation", "gc=Open_Punctuation"),
    ("S", "gc=Symbol"),
    ("Symbol", "gc=Symbol"),
    ("Sc", "gc=Currency_Symbol"),
    ("Currency_Symbol", "gc=Currency_Symbol"),
    ("Sk", "gc=Modifier_Symbol"),
    ("Modifier_Symbol", "gc=Modifier_Symbol"),
    ("Sm", "gc=Math_Symbol"),
    ("Math_Symbol", "gc=Math_Symbol"),
    ("So", "gc=Other_Symbol"),
    ("Other_Symbol", "gc=Other_Symbol"),
    ("Z", "gc=Separator"),
    ("Separator", "gc=Separator"),
    ("Zl", "gc=Line_Separator"),
    ("Line_Separator", "gc=Line_Separator"),
    ("Zp", "gc=Paragraph_Separator"),
    ("Paragraph_Separator", "gc=Paragraph_Separator"),
    ("Zs", "gc=Space_Separator"),
    ("Space_Separator", "gc=Space_Separator"),
];

/// The binary properties of ECMA-262's table (name and alias), each with
/// the regex crate's name. `Changes_When_NFKC_Casefolded` (`CWKCF`) is
/// missing on purpose: the regex crate has no table for it.
const BINARY: &[(&str, &str)] = &[
    ("ASCII", "ASCII"),
    ("ASCII_Hex_Digit", "ASCII_Hex_Digit"),
    ("AHex", "ASCII_Hex_Digit"),
    ("Alphabetic", "Alphabetic"),
    ("Alpha", "Alphabetic"),
    ("Any", "Any"),
    ("Assigned", "Assigned"),
    ("Bidi_Control", "Bidi_Control"),
    ("Bidi_C", "Bidi_Control"),
    ("Bidi_Mirrored", "Bidi_Mirrored"),
    ("Bidi_M", "Bidi_Mirrored"),
    ("Case_Ignorable", "Case_Ignorable"),
    ("CI", "Case_Ignorable"),
    ("Cased", "Cased"),
    ("Changes_When_Casefolded", "Changes_When_Casefolded"),
    ("CWCF", "Changes_When_Casefolded"),
    ("Changes_When_Casemapped", "Changes_When_Casemapped"),
    ("CWCM", "Changes_When_Casemapped"),
    ("Changes_When_Lowercased", "Changes_When_Lowercased"),
    ("CWL", "Changes_When_Lowercased"),
    ("Changes_When_Titlecased", "Changes_When_Titlecased"),
    ("CWT", "Changes_When_Titlecased"),
    ("Changes_When_Uppercased", "Changes_When_Uppercased"),
    ("CWU", "Changes_When_Uppercased"),
    ("Dash", "Dash"),
    ("Default_Ignorable_Code_Point", "Default_Ignorable_Code_Point"),
    ("DI", "Default_Ignorable_Code_Point"),
    ("Deprecated", "Deprecated"),
    ("Dep", "Deprecated"),
    ("Diacritic", "Diacritic"),
    ("Dia", "Diacritic"),
    ("Emoji", "Emoji"),
    ("Emoji_Component", "Emoji_Component"),
    ("EComp", "Emoji_Component"),
    ("Emoji_Modifier", "Emoji_Modifier"),
    ("EMod", "Emoji_Modifier"),
    ("Emoji_Modifier_Base", "Emoji_Modifier_Base"),
    ("EBase", "Emoji_Modifier_Base"),
    ("Emoji_Presentation", "Emoji_Presentation"),
    ("EPres", "Emoji_Presentation"),
    ("Extended_Pictographic", "Extended_Pictographic"),
    ("ExtPict", "Extended_Pictographic"),
    ("Extender", "Extender"),
    ("Ext", "Extender"),
    ("Grapheme_Base", "Grapheme_Base"),
    ("Gr_Base", "Grapheme_Base"),
    ("Grapheme_Extend", "Grapheme_Extend"),
    ("Gr_Ext", "Grapheme_Extend"),
    ("Hex_Digit", "Hex_Digit"),
    ("Hex", "Hex_Digit"),
    ("IDS_Binary_Operator", "IDS_Binary_Operator"),
    ("IDSB", "IDS_Binary_Operator"),
    ("IDS_Trinary_Operator", "IDS_Trinary_Operator"),
    ("IDST", "IDS_Trinary_Operator"),
    ("ID_Continue", "ID_Continue"),
    ("IDC", "ID_Continue"),
    ("ID_Start", "ID_Start"),
    ("IDS", "ID_Start"),
    ("Ideographic", "Ideographic"),
    ("Ideo", "Ideographic"),
    ("Join_Control", "Join_Control"),
    ("Join_C", "Join_Control"),
    ("Logical_Order_Exception", "Logical_Order_Exception"),
    ("LOE", "Logical_Order_Exception"),
    ("Lowercase", "Lowercase"),
    ("Lower", "Lowercase"),
    ("Math", "Math"),
    ("Noncharacter_Code_Point", "Noncharacter_Code_Point"),
    ("NChar", "Noncharacter_Code_Point"),
    ("Pattern_Syntax", "Pattern_Syntax"),
    ("Pat_Syn", "Pattern_Syntax"),
    ("Pattern_White_Space", "Pattern_White_Space"),
    ("Pat_WS", "Pattern_White_Space"),
    ("Quotation_Mark", "Quotation_Mark"),
    ("QMark", "Quotation_Mark"),
    ("Radical", "Radical"),
    ("Regional_Indicator", "Regional_Indicator"),
    ("RI", "Regional_Indicator"),
    ("Sentence_Terminal", "Sentence_Terminal"),
    ("STerm", "Sentence_Terminal"),
    ("Soft_Dotted", "Soft_Dotted"),
    ("SD", "Soft_Dotted"),
    ("Terminal_Punctuation", "Terminal_Punctuation"),
    ("Term", "Terminal_Punctuation"),
    ("Unified_Ideograph", "Unified_Ideograph"),
    ("UIdeo", "Unified_Ideograph"),
    ("Uppercase", "Uppercase"),
    ("Upper", "Uppercase"),
    ("Variation_Selector", "Variation_Selector"),
    ("VS", "Variation_Selector"),
    ("White_Space", "White_Space"),
    ("space", "White_Space"),
    ("XID_Continue", "XID_Continue"),
    ("XIDC", "XID_Continue"),
    ("XID_Start", "XID_Start"),
    ("XIDS", "XID_Start"),
];

fn find(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// Properties whose sets differ between the regex crate's Unicode 16.0
/// tables and a newer Unicode on code points that 16.0 already assigned
/// (a character moved between categories, or gained the property): an
/// ECMA-262 engine on the newer version would read them otherwise, so
/// they are refused rather than matched one way (the property sweep in
/// tests/patterns.rs finds them; it runs every code point against regress).
const VERSION_DEPENDENT: &[&str] = &[
    "gc=Lowercase_Letter",
    "gc=Other_Letter",
    "gc=Cased_Letter",
    "Cased",
    "Changes_When_Casemapped",
    "Changes_When_Titlecased",
    "Changes_When_Uppercased",
    "Diacritic",
    "Extended_Pictographic",
    "Lowercase",
];

/// Why a property name is refused.
pub(crate) enum Refusal {
    /// ECMA-262 does not define it, or vouch has no exact regex-crate name.
    Unknown,
    /// Defined, but its set depends on the Unicode version.
    VersionDependent,
}

/// The regex-crate property for the text between `\p{` and `}`.
pub(crate) fn lookup(text: &str) -> Result<&'static str, Refusal> {
    let found = match text.split_once('=') {
        Some(("General_Category" | "gc", value)) => find(GENERAL_CATEGORY, value),
        Some(_) => None,
        None => find(BINARY, text).or_else(|| find(GENERAL_CATEGORY, text)),
    };
    match found {
        None => Err(Refusal::Unknown),
        Some(name) if VERSION_DEPENDENT.contains(&name) => Err(Refusal::VersionDependent),
        Some(name) => Ok(name),
    }
}

/// Every spelling vouch accepts (for the tests that check each one against
/// an ECMA-262 engine over every code point).
pub(crate) fn all_names() -> impl Iterator<Item = String> {
    GENERAL_CATEGORY
        .iter()
        .flat_map(|(k, _)| [(*k).to_owned(), format!("gc={k}"), format!("General_Category={k}")])
        .chain(BINARY.iter().map(|(k, _)| (*k).to_owned()))
        .filter(|name| lookup(name).is_ok())
}
