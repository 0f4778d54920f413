//! `rectcast shaders`: every kernel the library compiles, as it compiles them (the WGSL source,
//! its override constants, and each entry point's workgroup size and bindings read from the
//! source with naga), so that a page or a game runs the same kernels with nothing copied.

use clap::Args;
use rectcast::gpu::Emulation;
use rectcast::gpu::shader;
use serde_json::{Map, Value, json};

use crate::options::Outcome;

#[derive(Args)]
pub struct ShadersArgs {
    /// Print JSON: `{ "version", "kernels": [{ "file", "source", "constants", "entry_points":
    /// [{ "name", "workgroup_size", "bindings": [{ "group", "binding", "type", "name" }],
    /// "storage_buffers" }] }] }`. Without it, one line per entry point.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ShadersArgs) -> Outcome {
    let kernels = kernels()?;
    if args.json {
        println!("{kernels}");
        return Ok(());
    }
    for kernel in kernels["kernels"].as_array().into_iter().flatten() {
        for entry in kernel["entry_points"].as_array().into_iter().flatten() {
            println!(
                "{} {}: workgroup {}, {} storage buffers",
                kernel["file"].as_str().unwrap_or_default(),
                entry["name"].as_str().unwrap_or_default(),
                entry["workgroup_size"],
                entry["storage_buffers"],
            );
        }
    }
    Ok(())
}

/// The export: [`shader::kernels`] with their entry points.
pub fn kernels() -> Result<Value, String> {
    let kernels = shader::kernels(Emulation::Native)
        .iter()
        .map(|kernel| {
            let constants: Map<String, Value> = kernel
                .constants
                .iter()
                .map(|&(name, value)| (name.to_owned(), json!(value)))
                .collect();
            Ok(json!({
                "file": kernel.file,
                "source": kernel.source,
                "constants": constants,
                "entry_points": entry_points(kernel)?,
            }))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({ "version": env!("CARGO_PKG_VERSION"), "kernels": kernels }))
}

/// Each entry point of `kernel` as its pipeline sees it, once specialised with its constants:
/// its workgroup size, and the bindings it uses (what a pipeline with an automatic layout
/// binds).
fn entry_points(kernel: &shader::Kernel) -> Result<Vec<Value>, String> {
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    let fail = |e: &dyn std::fmt::Display| format!("shaders/{}: {e}", kernel.file);
    let module = naga::front::wgsl::parse_str(kernel.source).map_err(|e| fail(&e))?;
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::empty());
    let info = validator.validate(&module).map_err(|e| fail(&e))?;
    let constants = kernel
        .constants
        .iter()
        .map(|&(name, value)| (name.to_owned(), value))
        .collect();
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
            .map_err(|e| fail(&e))?;
    let entry_points = module.entry_points.iter().enumerate().map(|(i, entry)| {
        let uses = info.get_entry_point(i);
        let mut bindings: Vec<(u32, u32, &str, &str)> = module
            .global_variables
            .iter()
            .filter(|(handle, _)| !uses[*handle].is_empty())
            .filter_map(|(_, global)| {
                let binding = global.binding.as_ref()?;
                let ty = match global.space {
                    naga::AddressSpace::Uniform => "uniform",
                    naga::AddressSpace::Storage { access }
                        if access.contains(naga::StorageAccess::STORE) =>
                    {
                        "storage"
                    }
                    naga::AddressSpace::Storage { .. } => "read-only-storage",
                    _ => "other",
                };
                Some((
                    binding.group,
                    binding.binding,
                    ty,
                    global.name.as_deref().unwrap_or_default(),
                ))
            })
            .collect();
        bindings.sort();
        let storage = bindings.iter().filter(|b| b.2.ends_with("storage")).count();
        json!({
            "name": entry.name,
            "workgroup_size": entry.workgroup_size,
            "bindings": bindings
                .iter()
                .map(|&(group, binding, ty, name)| {
                    json!({ "group": group, "binding": binding, "type": ty, "name": name })
                })
                .collect::<Vec<_>>(),
            "storage_buffers": storage,
        })
    });
    Ok(entry_points.collect())
}
