//! `bindings/fortran/latsol.f90` stays in step with `include/latsol.h`.
//!
//! Everything here is driven by the header's text, so a struct, field,
//! constant or function added to the header and not to the module fails,
//! naming what is missing:
//! - by reading both files: every struct has a `bind(c)` type with the same
//!   fields in the same order and of matching types, every `LATSOL_*`
//!   constant is an enumerator of the same value, every function has a
//!   `bind(c)` interface with its name whose arguments match one for one
//!   (pass by value or by reference as the C pointer depth requires);
//! - by compiling: a C program prints `sizeof` and `offsetof` of every
//!   struct field, a generated Fortran program prints `c_sizeof` and the
//!   `c_loc` offsets of the mirror types, and the two must agree; the
//!   Fortran program also calls every `*_default()` constructor through the
//!   module, linked against the staticlib, and prints the `struct_size` the
//!   library wrote, which must be the C `sizeof`.
//!
//! The compiled half needs gfortran (`$FC`) and a C compiler (`$CC`). Where
//! gfortran is missing it prints a notice and passes, unless
//! `LATSOL_REQUIRE_TOOLS=1` (as `.ci/run` sets: CI installs gfortran).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

mod abi_text;
use abi_text::*;

// ---- the comparison by reading ---------------------------------------------

/// What a C parameter or result must look like in the module: checks one
/// Fortran declaration against a C type; an error message on mismatch.
fn check_arg(h: &Header, cty: &str, f: &FDecl, is_result: bool) -> Result<(), String> {
    let (base, depth) = c_base(cty);
    let by_value = f.attrs.iter().any(|a| a == "value") || is_result;
    let opaque_or_string = h.opaque.contains(&base) || base == "char";
    let f_depth = match f.ty.as_str() {
        "type(c_ptr)" | "type(c_funptr)" => 1 + usize::from(!by_value),
        _ => usize::from(!by_value),
    };
    let ok = if opaque_or_string {
        f.ty == "type(c_ptr)" && f_depth == depth
    } else if base == "void" {
        // `void *`: a native array of any type, or a c_ptr by value;
        // `void **` (e.g. a table of fields): c_ptr by reference or array.
        (depth == 1 && f.ty == "type(*)" && f.dims.as_deref() == Some("*") && !by_value)
            || (f.ty == "type(c_ptr)" && f_depth == depth)
    } else {
        let want = h.fortran_type(&base);
        f.ty == want.to_lowercase() && f_depth == depth
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{cty}` is declared `{}{}{} :: {}`",
            f.ty,
            if by_value && !is_result {
                ", value"
            } else {
                ""
            },
            f.dims
                .as_ref()
                .map_or(String::new(), |d| format!(", dimension({d})")),
            f.name
        ))
    }
}

fn compare_text(h: &Header, m: &Module) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, fields) in &h.structs {
        let Some(ftype) = m.types.get(name) else {
            errors.push(format!(
                "struct {name}: no `type, bind(c) :: {name}` in the module"
            ));
            continue;
        };
        let cnames: Vec<_> = fields.iter().map(|f| f.name.to_lowercase()).collect();
        let fnames: Vec<_> = ftype.iter().map(|f| f.name.clone()).collect();
        if cnames != fnames {
            errors.push(format!(
                "struct {name}: fields {cnames:?} in C, {fnames:?} in Fortran"
            ));
            continue;
        }
        for (c, f) in fields.iter().zip(ftype) {
            let (base, depth) = c_base(&c.ty);
            let want = if depth > 0 {
                "type(c_ptr)".to_string()
            } else {
                h.fortran_type(&base)
            };
            let len = f.dims.as_ref().map(|d| array_length(d, &m.enumerators));
            if f.ty != want.to_lowercase() || len != c.len {
                errors.push(format!(
                    "{name}.{}: C `{}{}` wants `{want}{}`, the module has `{}{}`",
                    c.name,
                    c.ty,
                    c.len.map_or(String::new(), |n| format!("[{n}]")),
                    c.len.map_or(String::new(), |n| format!(" ({n})")),
                    f.ty,
                    f.dims.as_ref().map_or(String::new(), |d| format!(" ({d})")),
                ));
            }
        }
    }
    for name in m.types.keys() {
        if !h.structs.contains_key(name) {
            errors.push(format!("type {name}: in the module, not in the header"));
        }
    }

    let fenums: BTreeMap<_, _> = m.enumerators.iter().cloned().collect();
    for (name, value) in &h.constants {
        match fenums.get(name) {
            None => errors.push(format!("{name}: no enumerator in the module")),
            Some(v) if v != value => errors.push(format!("{name}: {value} in C, {v} in Fortran")),
            Some(_) => {}
        }
    }
    for (name, _) in &m.enumerators {
        if !h.constants.iter().any(|(n, _)| n == name) {
            errors.push(format!("{name}: in the module, not in the header"));
        }
    }

    for func in &h.functions {
        // A function new to the header shows up here first: its interface,
        // and bind(c) types for any new struct, belong in
        // bindings/fortran/latsol.f90 next to latsol_invert.
        let Some(fi) = m.interfaces.iter().find(|i| i.bind_name == func.name) else {
            errors.push(format!(
                "{}: no interface with bind(c, name='{}') in the module",
                func.name, func.name
            ));
            continue;
        };
        if fi.args.len() != func.params.len() {
            errors.push(format!(
                "{}: {} arguments in C, {} in Fortran",
                func.name,
                func.params.len(),
                fi.args.len()
            ));
            continue;
        }
        let decl = |n: &str| fi.decls.iter().find(|d| d.name == n);
        for ((cty, cname), fname) in func.params.iter().zip(&fi.args) {
            match decl(fname) {
                None => errors.push(format!("{}: argument {fname} undeclared", func.name)),
                Some(d) => {
                    if let Err(e) = check_arg(h, cty, d, false) {
                        errors.push(format!("{} argument {cname}: {e}", func.name));
                    }
                }
            }
        }
        match decl(&fi.result) {
            None => errors.push(format!("{}: result undeclared", func.name)),
            Some(d) => {
                if let Err(e) = check_arg(h, &func.ret, d, true) {
                    errors.push(format!("{} result: {e}", func.name));
                }
            }
        }
    }
    for fi in &m.interfaces {
        let ours = fi.bind_name.starts_with("latsol_");
        if ours && !h.functions.iter().any(|f| f.name == fi.bind_name) {
            errors.push(format!(
                "{}: in the module, not in the header",
                fi.bind_name
            ));
        }
    }
    errors
}

fn header() -> Header {
    parse_header(&std::fs::read_to_string(root().join("include/latsol.h")).unwrap())
}

fn module() -> Module {
    parse_module(&std::fs::read_to_string(root().join("bindings/fortran/latsol.f90")).unwrap())
}

#[test]
fn module_mirrors_every_struct_constant_and_function_of_the_header() {
    let (h, m) = (header(), module());
    // The parsers found what they should (a parser that finds nothing
    // would make the comparison vacuous).
    assert!(h.structs.len() >= 4 && h.structs["latsol_invert_param"].len() >= 20);
    assert!(h
        .functions
        .iter()
        .any(|f| f.name == "latsol_invert" && f.params.len() == 6));
    assert!(h.constants.len() >= 50);
    assert!(!m.types.is_empty() && m.enumerators.len() >= 50 && m.interfaces.len() >= 13);
    let errors = compare_text(&h, &m);
    assert!(
        errors.is_empty(),
        "bindings/fortran/latsol.f90 is out of step with include/latsol.h:\n  {}",
        errors.join("\n  ")
    );
}

#[test]
fn the_comparison_catches_a_missing_field_and_a_wrong_value() {
    let h = header();
    let text = std::fs::read_to_string(root().join("bindings/fortran/latsol.f90")).unwrap();
    let broken = text
        .replace("    integer(c_int32_t) :: cg_stabilised\n", "")
        .replace("LATSOL_OP_DSLASH = 3", "LATSOL_OP_DSLASH = 4")
        .replace(
            "type(c_ptr), value :: gauge\n      real",
            "type(c_ptr) :: gauge\n      real",
        );
    let errors = compare_text(&h, &parse_module(&broken)).join("\n");
    assert!(errors.contains("latsol_invert_param: fields"), "{errors}");
    assert!(
        errors.contains("LATSOL_OP_DSLASH: 3 in C, 4 in Fortran"),
        "{errors}"
    );
    assert!(
        errors.contains("latsol_gauge_plaquette argument gauge"),
        "{errors}"
    );
    // A function added to the header with no interface is named.
    let mut h = header();
    h.functions.push(parse_c_function(
        "latsol_status latsol_not_yet_bound(struct latsol_context *ctx);",
    ));
    let errors = compare_text(&h, &module()).join("\n");
    assert!(
        errors.contains("latsol_not_yet_bound: no interface"),
        "{errors}"
    );
}

// ---- the comparison by compiling ---------------------------------------------

/// `liblatsol.a` of this build: `cargo test` puts it in `<profile>/deps/`,
/// `cargo build` in `<profile>/` (as tests/c_example.rs finds it).
fn staticlib() -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent()?.parent()?;
    [
        profile.join("deps/liblatsol.a"),
        profile.join("liblatsol.a"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The C side: `S size`, `S.f offset size` for every struct and field,
/// and `S.default size` (what `*_default()` will write into struct_size).
fn c_layout_program(h: &Header) -> String {
    let mut s = String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"latsol.h\"\n");
    s.push_str("int main(void) {\n");
    for (name, fields) in &h.structs {
        s += &format!("    printf(\"{name} %zu\\n\", sizeof({name}));\n");
        for f in fields {
            s += &format!(
                "    printf(\"{name}.{0} %zu %zu\\n\", offsetof({name}, {0}), sizeof((({name} *)0)->{0}));\n",
                f.name
            );
        }
    }
    for (func, st) in default_constructors(h) {
        s += &format!("    printf(\"{st}.default %zu\\n\", sizeof({st})); /* {func} */\n");
    }
    s.push_str("    return 0;\n}\n");
    s
}

/// `(function, struct)` for each `struct S latsol_*_default(void)`.
fn default_constructors(h: &Header) -> Vec<(String, String)> {
    h.functions
        .iter()
        .filter(|f| f.params.is_empty() && f.name.ends_with("_default"))
        .filter_map(|f| {
            let (base, depth) = c_base(&f.ret);
            (depth == 0 && h.structs.contains_key(&base)).then(|| (f.name.clone(), base))
        })
        .collect()
}

/// The Fortran side of the same lines, through `use latsol`.
fn fortran_layout_program(h: &Header) -> String {
    let mut s = String::from(
        "program layout\n  use, intrinsic :: iso_c_binding\n  use latsol\n  implicit none\n\
         integer(c_intptr_t) :: base\n",
    );
    for (name, fields) in &h.structs {
        s += &format!("  block\n    type({name}), target :: v\n");
        s += "    base = transfer(c_loc(v), base)\n";
        s += &format!("    print '(a,1x,i0)', '{name}', c_sizeof(v)\n");
        for f in fields {
            let n = f.name.to_lowercase();
            // Continuation lines keep each line within free form's 132.
            s += &format!(
                "    print '(a,1x,i0,1x,i0)', '{name}.{}', &\n      \
                 transfer(c_loc(v%{n}), base) - base, c_sizeof(v%{n})\n",
                f.name
            );
        }
        s += "  end block\n";
    }
    for (func, st) in default_constructors(h) {
        s += &format!(
            "  block\n    type({st}) :: v\n    v = {func}()\n    \
             print '(a,1x,i0)', '{st}.default', v%struct_size\n  end block\n"
        );
    }
    s.push_str("end program layout\n");
    s
}

#[test]
fn struct_layouts_agree_between_c_and_fortran() {
    let fc = std::env::var("FC").unwrap_or_else(|_| "gfortran".into());
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    if Command::new(&fc).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("LATSOL_REQUIRE_TOOLS").is_none_or(|v| v != "1"),
            "LATSOL_REQUIRE_TOOLS=1 but the Fortran compiler `{fc}` is not there"
        );
        let why = format!("no Fortran compiler `{fc}`: the C/Fortran layout comparison is skipped");
        println!("NOTICE: {why}");
        // The test command (scripts/test.sh) counts the skipped parts in its summary.
        if let Some(log) = std::env::var_os("LATSOL_SKIP_LOG") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
            {
                let _ = writeln!(f, "fortran_module: {why}");
            }
        }
        return;
    }
    let lib = staticlib().expect("cargo test builds liblatsol.a for the integration tests");
    let h = header();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fortran_module");
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let c_src = write("layout.c", c_layout_program(&h));
    let f_src = write("layout.f90", fortran_layout_program(&h));
    let c_exe = dir.join("layout_c");
    let f_exe = dir.join("layout_f");
    run_ok(
        Command::new(&cc)
            .args(["-std=c99", "-Wall", "-Werror", "-I"])
            .arg(root().join("include"))
            .arg(&c_src)
            .arg("-o")
            .arg(&c_exe),
        "compiling the C layout program",
    );
    // -std=f2018: the module is standard Fortran (2003 plus assumed type).
    run_ok(
        Command::new(&fc)
            .args(["-std=f2018", "-Wall", "-Werror", "-J"])
            .arg(&dir)
            .arg(root().join("bindings/fortran/latsol.f90"))
            .arg(&f_src)
            .arg(&lib)
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&f_exe),
        "compiling the module and the Fortran layout program",
    );
    let c_out = run_ok(&mut Command::new(&c_exe), "the C layout program");
    let f_out = run_ok(&mut Command::new(&f_exe), "the Fortran layout program");
    let lines = |s: &str| s.lines().map(|l| l.trim().to_string()).collect::<Vec<_>>();
    let (c_lines, f_lines) = (lines(&c_out), lines(&f_out));
    println!("{c_out}");
    assert!(c_lines.len() > h.structs.len() * 5, "{c_out}");
    let diffs: Vec<_> = c_lines
        .iter()
        .zip(&f_lines)
        .filter(|(c, f)| c != f)
        .map(|(c, f)| format!("C `{c}` vs Fortran `{f}`"))
        .collect();
    assert!(
        diffs.is_empty() && c_lines.len() == f_lines.len(),
        "layouts differ (name offset size):\n  {}",
        diffs.join("\n  ")
    );
}
