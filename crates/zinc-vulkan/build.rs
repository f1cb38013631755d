//! Compiles every shader in `shaders/` to SPIR-V with glslang (no system tool), once per quant
//! format for the per-format kernels, and writes `shaders.rs` listing them for `include_bytes!`.
//!
//! Preprocessing is ours: `#include "x.glsl"` lines are replaced by the file, per-format
//! variants get `#define TYPE_<FMT> 1` after `#version`, per-head-dimension ones
//! `#define HEAD_DIM <d>u`, and the few in `WITH_VARIANT` their one define.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Kernels compiled once per weight format.
const PER_FORMAT: &[&str] = &[
    "matvec",
    "matmul",
    "get_rows",
    "moe_matvec",
    "matvecq",
    "matmul_cm",
    "dequant_f16",
    "moe_matvecq",
    "moe_matmul_cm",
];
/// Shaders compiled once per head dimension (`HEAD_DIM`), as `<name>_<dim>`, and for each of
/// their WITH_VARIANT entries as `<name>_<suffix>_<dim>`.
const PER_HEAD_DIM: &[&str] = &["attn_fa", "attn_dec_cm"];
const HEAD_DIMS: &[u32] = &[32, 64, 128];
/// Float formats, which the kernels in QUANT_ONLY have no variant for (their weights go
/// elsewhere), except the pairs in FLOAT_EXTRA (matmul_cm reads F16 rows as they are).
const FLOAT_FORMATS: &[&str] = &["F32", "F16", "BF16"];
const QUANT_ONLY: &[&str] = &[
    "matvecq",
    "matmul_cm",
    "dequant_f16",
    "moe_matvecq",
    "moe_matmul_cm",
];
/// Shaders compiled as they are and once more for each of their entries here, with its
/// defines, as `<name>_<suffix>`.
const WITH_VARIANT: &[(&str, &str, &str)] = &[
    ("act_quant", "sg", "#define SG_ON 1"),
    ("act_quant", "glu", "#define GLU 1"),
    ("act_quant", "glu_sg", "#define GLU 1\n#define SG_ON 1"),
    ("rms_norm", "round", "#define ROUND 1"),
    ("attn_dec", "prep", "#define PREP_ON 1"),
    ("attn_dec", "one", "#define ONE_PASS 1"),
    (
        "attn_dec",
        "prep_one",
        "#define PREP_ON 1\n#define ONE_PASS 1",
    ),
    ("attn_dec", "rows", "#define KROWS 4"),
    (
        "attn_dec",
        "prep_rows",
        "#define PREP_ON 1\n#define KROWS 4",
    ),
    ("attn_dec", "rows2", "#define KROWS 2"),
    ("attn_combine", "ahead", "#define AHEAD 1"),
    ("attn_dec_cm", "prep", "#define PREP_ON 1"),
    ("attn_dec_cm", "blk", "#define BLOCKS 1"),
    (
        "attn_dec_cm",
        "prep_blk",
        "#define PREP_ON 1\n#define BLOCKS 1",
    ),
    (
        "attn_dec",
        "prep_rows2",
        "#define PREP_ON 1\n#define KROWS 2",
    ),
];
/// Shaders also compiled as `<variant>_clk` (clock.glsl: each workgroup's start and end on the
/// device's clock, for `VulkanOptions::clock`): every kernel a decode step dispatches, each of
/// its variants, but per-format ones for CLOCKED_FORMATS only (a dispatch of another pipeline
/// runs unclocked, and the clock's report says so).
const CLOCKED: &[&str] = &[
    "act_quant",
    "argmax",
    "attn_combine",
    "attn_dec",
    "attn_dec_cm",
    "elementwise",
    "gather",
    "get_rows",
    "glu_quant",
    "kv_store",
    "matvec",
    "matvec_dec",
    "matvecq",
    "moe_combine",
    "moe_matvec",
    "moe_matvecq",
    "moe_route",
    "moe_sort",
    "norm_quant",
    "qk_prep",
    "quant_act",
    "rms_norm",
    "rope",
    "rscale",
];
const CLOCKED_FORMATS: &[&str] = &["F32", "F16", "Q8_0", "Q4_K", "Q6_K"];
/// Kernels compiled for these formats only.
const ONLY_FORMATS: &[(&str, &[&str])] = &[("matvec_dec", &["Q4_K", "Q6_K"])];
/// Exceptions to QUANT_ONLY: (shader, float format) pairs that are compiled.
const FLOAT_EXTRA: &[(&str, &str)] = &[("matmul_cm", "F16"), ("moe_matmul_cm", "F16")];
const FORMATS: &[&str] = &[
    "F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
    "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4",
];

fn expand(dir: &Path, text: &str, depth: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#include") {
            let name = rest.trim().trim_matches('"');
            let path = dir.join(name);
            let inc = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(depth < 8, "include loop at {name}");
            out.push_str(&expand(dir, &inc, depth + 1));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn compile(name: &str, source: &str) -> Vec<u32> {
    use glslang::*;
    let compiler = Compiler::acquire().expect("glslang compiler");
    let options = CompilerOptions {
        source_language: SourceLanguage::GLSL,
        target: Target::Vulkan {
            version: VulkanVersion::Vulkan1_2,
            spirv_version: SpirvVersion::SPIRV1_5,
        },
        version_profile: None,
        messages: ShaderMessage::DEFAULT,
    };
    let src = ShaderSource::from(source.to_string());
    let input = ShaderInput::new(&src, ShaderStage::Compute, &options, None, None)
        .unwrap_or_else(|e| panic!("shader {name}: {e}"));
    let shader = compiler
        .create_shader(input)
        .unwrap_or_else(|e| panic!("shader {name}: {e}"));
    shader
        .compile()
        .unwrap_or_else(|e| panic!("shader {name} does not compile:\n{e}"))
}

/// `src` with its `main` renamed `zinc_main` and clock.glsl's `main` around it, the clocks'
/// extensions after `#version`.
fn with_clock(name: &str, src: &str, clock: &str) -> String {
    assert_eq!(src.matches("void main()").count(), 1, "{name}: one main");
    // The extensions, and CLK_ON for common.glsl's CLK_MARK (preprocessor lines only: they
    // come before the shader's own extensions).
    let exts = "#extension GL_EXT_shader_realtime_clock : require\n\
                #extension GL_ARB_shader_clock : require\n\
                #extension GL_EXT_buffer_reference_uvec2 : require\n\
                #define CLK_ON 1\n";
    let s = src.replacen("#version 450\n", &format!("#version 450\n{exts}"), 1);
    format!(
        "{}\n{clock}",
        s.replacen("void main()", "void zinc_main()", 1)
    )
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("shaders");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=shaders");
    let mut entries = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("shaders/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "comp"))
        .collect();
    files.sort();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = expand(&dir, &std::fs::read_to_string(&path).unwrap(), 0);
        // A variant: `name` compiled with `define` right after `#version`.
        let variant = |suffix: String, define: String| {
            let src = text.replacen("#version 450\n", &format!("#version 450\n{define}\n"), 1);
            (format!("{stem}_{suffix}"), src)
        };
        let variants: Vec<(String, String)> = if PER_HEAD_DIM.contains(&stem.as_str()) {
            let extra = WITH_VARIANT.iter().filter(|v| v.0 == stem);
            let plain = std::iter::once(("", ""));
            (plain.chain(extra.map(|(_, suffix, define)| (*suffix, *define))))
                .flat_map(|(suffix, define)| {
                    HEAD_DIMS.iter().map(move |d| {
                        let name = match suffix {
                            "" => d.to_string(),
                            _ => format!("{suffix}_{d}"),
                        };
                        variant(name, format!("{define}\n#define HEAD_DIM {d}u"))
                    })
                })
                .collect()
        } else if let Some((_, only)) = ONLY_FORMATS.iter().find(|(n, _)| *n == stem) {
            only.iter()
                .map(|f| variant(f.to_string(), format!("#define TYPE_{f} 1")))
                .collect()
        } else if PER_FORMAT.contains(&stem.as_str()) {
            FORMATS
                .iter()
                .filter(|f| {
                    !QUANT_ONLY.contains(&stem.as_str())
                        || !FLOAT_FORMATS.contains(f)
                        || FLOAT_EXTRA.contains(&(stem.as_str(), **f))
                })
                .map(|f| variant(f.to_string(), format!("#define TYPE_{f} 1")))
                .collect()
        } else {
            // As it is, and once for each of its WITH_VARIANT entries.
            let extra = WITH_VARIANT.iter().filter(|v| v.0 == stem);
            std::iter::once((stem.clone(), text.clone()))
                .chain(
                    extra
                        .map(|(_, suffix, define)| variant(suffix.to_string(), define.to_string())),
                )
                .collect()
        };
        let clocked: Vec<(String, String)> = if CLOCKED.contains(&stem.as_str()) {
            let clock = expand(
                &dir,
                &std::fs::read_to_string(dir.join("clock.glsl")).unwrap(),
                0,
            );
            (variants.iter())
                .filter(|(name, _)| {
                    let per_format = name.strip_prefix(&format!("{stem}_"));
                    !PER_FORMAT.contains(&stem.as_str())
                        || per_format.is_some_and(|f| CLOCKED_FORMATS.contains(&f))
                })
                .map(|(name, src)| (format!("{name}_clk"), with_clock(name, src, &clock)))
                .collect()
        } else {
            Vec::new()
        };
        for (name, src) in variants.into_iter().chain(clocked) {
            let words = compile(&name, &src);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let file = out.join(format!("{name}.spv"));
            std::fs::write(&file, bytes).unwrap();
            entries.push((name, file));
        }
    }
    let mut rs = String::from("/// Every compiled shader: (name, SPIR-V bytes).\npub static SHADERS: &[(&str, &[u8])] = &[\n");
    for (name, file) in &entries {
        writeln!(
            rs,
            "    ({name:?}, include_bytes!({:?})),",
            file.display().to_string()
        )
        .unwrap();
    }
    rs.push_str("];\n");
    std::fs::write(out.join("shaders.rs"), rs).unwrap();
}
