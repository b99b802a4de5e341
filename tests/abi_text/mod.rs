//! Readers of the C header and of the Fortran module's source, for
//! tests/fortran_module.rs: the header as cbindgen writes it (structs,
//! `LATSOL_*` constants, function declarations), the module as written in
//! bindings/fortran/latsol.f90 (bind(c) types, enumerators, interfaces).
#![allow(dead_code)]

use std::collections::BTreeMap;

// ---- the header ----------------------------------------------------------

#[derive(Debug)]
pub struct CField {
    pub ty: String,
    pub name: String,
    pub len: Option<usize>,
}

#[derive(Debug)]
pub struct CFunction {
    pub ret: String,
    pub name: String,
    /// (type with pointer stars, parameter name)
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Default)]
pub struct Header {
    pub structs: BTreeMap<String, Vec<CField>>,
    pub opaque: Vec<String>,
    pub int_typedefs: Vec<String>,
    pub fn_typedefs: Vec<String>,
    pub constants: Vec<(String, i64)>,
    pub functions: Vec<CFunction>,
}

/// The header without its comments (cbindgen writes `/** ... */` blocks and
/// `//` after the C++ guards).
pub fn strip_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("comments are closed") + start + 2;
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn parse_header(text: &str) -> Header {
    let text = strip_c_comments(text);
    let mut h = Header::default();
    let mut lines = text.lines().map(str::trim).peekable();
    let mut in_extern = false;
    let mut decl = String::new();
    while let Some(line) = lines.next() {
        if line.is_empty() || line.starts_with("#include") || line.starts_with("#if") {
            continue;
        }
        if line.starts_with("extern \"C\"") {
            in_extern = true;
            continue;
        }
        if let Some(def) = line.strip_prefix("#define ") {
            let mut parts = def.split_whitespace();
            if let (Some(name), Some(value)) = (parts.next(), parts.next()) {
                if name.starts_with("LATSOL_") && name != "LATSOL_H" {
                    let v = value.parse().unwrap_or_else(|_| panic!("{name} = {value}"));
                    h.constants.push((name.to_string(), v));
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("typedef struct ") {
            let name = rest.split_whitespace().next().unwrap().to_string();
            if rest.ends_with('{') {
                let mut fields = Vec::new();
                for field in lines.by_ref() {
                    if field.starts_with('}') {
                        break;
                    }
                    if field.is_empty() {
                        continue;
                    }
                    fields.push(parse_c_field(field, &h.constants));
                }
                h.structs.insert(name, fields);
            } else {
                h.opaque.push(name);
            }
            continue;
        }
        // A function pointer first: it may return an int32_t.
        if line.starts_with("typedef ") && line.contains("(*") {
            let name = line.split("(*").nth(1).unwrap().split(')').next().unwrap();
            h.fn_typedefs.push(name.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("typedef int32_t ") {
            h.int_typedefs.push(rest.trim_end_matches(';').to_string());
            continue;
        }
        if in_extern && !line.starts_with('}') && !line.starts_with('#') {
            decl.push(' ');
            decl.push_str(line);
            if decl.trim_end().ends_with(';') {
                h.functions.push(parse_c_function(decl.trim()));
                decl.clear();
            }
        }
    }
    assert!(decl.trim().is_empty(), "unterminated declaration: {decl}");
    h
}

/// `double x[3]` or `int32_t n[LATSOL_MAX_SHIFTS]` (a length named by a
/// `#define` read earlier in the header).
pub fn parse_c_field(line: &str, constants: &[(String, i64)]) -> CField {
    let line = line.trim_end_matches(';');
    let (decl, len) = match line.split_once('[') {
        Some((d, n)) => (d, Some(array_length(n.trim_end_matches(']'), constants))),
        None => (line, None),
    };
    let (ty, name) = split_c_decl(decl);
    CField { ty, name, len }
}

/// An array length: a number, or the name of a constant (C `#define` or
/// Fortran `parameter`).
pub fn array_length(text: &str, constants: &[(String, i64)]) -> usize {
    let text = text.trim();
    text.parse().unwrap_or_else(|_| {
        let (_, v) = constants
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(text))
            .unwrap_or_else(|| panic!("array length {text} is neither a number nor a constant"));
        usize::try_from(*v).expect("array lengths are positive")
    })
}

/// `const struct foo **name` → (`const struct foo **`, `name`).
pub fn split_c_decl(decl: &str) -> (String, String) {
    let decl = decl.trim();
    let at = decl
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (decl[..at].trim().to_string(), decl[at..].to_string())
}

pub fn parse_c_function(decl: &str) -> CFunction {
    let (head, args) = decl.split_once('(').unwrap();
    let args = args.trim_end_matches(';').trim().trim_end_matches(')');
    let (ret, name) = split_c_decl(head);
    let params = if args.trim() == "void" {
        Vec::new()
    } else {
        args.split(',').map(split_c_decl).collect()
    };
    CFunction { ret, name, params }
}

/// A C type without qualifiers or stars, and its pointer depth.
pub fn c_base(ty: &str) -> (String, usize) {
    let depth = ty.matches('*').count();
    let base = ty
        .replace('*', " ")
        .split_whitespace()
        .filter(|w| *w != "const" && *w != "struct")
        .collect::<Vec<_>>()
        .join(" ");
    (base, depth)
}

impl Header {
    /// The Fortran type that mirrors a C value type (not a pointer).
    pub fn fortran_type(&self, base: &str) -> String {
        match base {
            "size_t" => "integer(c_size_t)".into(),
            "int32_t" => "integer(c_int32_t)".into(),
            "int64_t" => "integer(c_int64_t)".into(),
            "double" => "real(c_double)".into(),
            "float" => "real(c_float)".into(),
            t if self.int_typedefs.iter().any(|n| n == t) => "integer(c_int32_t)".into(),
            t if self.fn_typedefs.iter().any(|n| n == t) => "type(c_funptr)".into(),
            t if self.structs.contains_key(t) => format!("type({t})"),
            t => panic!("no Fortran mirror known for the C type `{t}`"),
        }
    }
}

// ---- the module ------------------------------------------------------------

#[derive(Debug)]
pub struct FDecl {
    pub ty: String,
    pub attrs: Vec<String>,
    pub name: String,
    pub dims: Option<String>,
}

#[derive(Debug)]
pub struct FInterface {
    pub bind_name: String,
    pub args: Vec<String>,
    pub result: String,
    pub decls: Vec<FDecl>,
}

#[derive(Debug, Default)]
pub struct Module {
    pub types: BTreeMap<String, Vec<FDecl>>,
    pub enumerators: Vec<(String, i64)>,
    pub interfaces: Vec<FInterface>,
}

/// Free-form source as statements: comments dropped, `&` continuations
/// joined, lower case (Fortran is case-insensitive; names are compared so).
pub fn fortran_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for raw in text.lines() {
        // No `!` occurs inside a string in the module.
        let line = raw.split('!').next().unwrap().trim();
        let line = line.strip_prefix('&').unwrap_or(line).trim();
        if let Some(cont) = line.strip_suffix('&') {
            cur.push_str(cont);
            cur.push(' ');
            continue;
        }
        cur.push_str(line);
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_lowercase());
        }
        cur.clear();
    }
    out
}

/// `real(c_double), intent(out) :: plaq(3)` → one declaration.
pub fn parse_f_decl(stmt: &str) -> FDecl {
    let (spec, name) = stmt.split_once("::").expect("a declaration has ::");
    // Split the spec at top-level commas: `type(*), dimension(*), intent(in)`.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(spec[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(spec[start..].trim().to_string());
    let ty = parts.remove(0).replace(' ', "");
    let name = name.trim();
    let (name, dims) = match name.split_once('(') {
        Some((n, d)) => (n.trim(), Some(d.trim_end_matches(')').to_string())),
        None => (name, None),
    };
    let attrs: Vec<String> = parts.iter().map(|p| p.replace(' ', "")).collect();
    let dims = dims.or_else(|| {
        attrs.iter().find_map(|a| {
            a.strip_prefix("dimension(")
                .map(|d| d.trim_end_matches(')').into())
        })
    });
    FDecl {
        ty,
        attrs,
        name: name.to_string(),
        dims,
    }
}

pub fn parse_module(text: &str) -> Module {
    let mut m = Module::default();
    let stmts = fortran_statements(text);
    let mut i = 0;
    while i < stmts.len() {
        let s = &stmts[i];
        if let Some(name) = s.strip_prefix("type, bind(c) ::") {
            let mut fields = Vec::new();
            i += 1;
            while !stmts[i].starts_with("end type") {
                fields.push(parse_f_decl(&stmts[i]));
                i += 1;
            }
            m.types.insert(name.trim().to_string(), fields);
        } else if let Some(e) = s
            .strip_prefix("enumerator ::")
            .or_else(|| s.strip_prefix("integer(c_int32_t), parameter ::"))
        {
            let (name, value) = e.split_once('=').expect("enumerators have values");
            m.enumerators
                .push((name.trim().to_uppercase(), value.trim().parse().unwrap()));
        } else if s.starts_with("function ") && s.contains("bind(c") {
            let args = s.split_once('(').unwrap().1.split_once(')').unwrap().0;
            let args = args
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect();
            let result = s
                .split_once("result(")
                .expect("interfaces name their result")
                .1;
            let result = result.split_once(')').unwrap().0.trim().to_string();
            let bind_name = s
                .split_once("name=")
                .expect("bind(c) names the C function")
                .1;
            let bind_name = bind_name.trim_matches(|c| c == '\'' || c == '"' || c == ')');
            let mut decls = Vec::new();
            i += 1;
            while !stmts[i].starts_with("end function") {
                if !stmts[i].starts_with("import") {
                    decls.push(parse_f_decl(&stmts[i]));
                }
                i += 1;
            }
            m.interfaces.push(FInterface {
                bind_name: bind_name.trim().to_string(),
                args,
                result,
                decls,
            });
        }
        i += 1;
    }
    m
}
