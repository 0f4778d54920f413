//! The registered shapes' flags (`--walls`, `--circles`): one per shape of the
//! `registered_shapes!` line in `targets.rs`, added to a command with `#[command(flatten)]`.
//! Each takes a file of the shape's records; its name and help come from the shape's
//! description, so a new shape needs no flag written by hand. They join the command's
//! `targets` group, which says whether they exclude each other.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use rectcast::{SceneShape, ShapeRecord};

use crate::targets::{ForShape, ResultCells, SHAPE_FLAGS, for_shape};

/// The group of a command's target flags.
pub const TARGETS: &str = "targets";

/// What a command says of a shape's flag.
pub trait FlagHelp {
    /// The help of shape `S`'s flag.
    fn help<S: ShapeRecord + SceneShape>() -> String
    where
        S::Contact: ResultCells;
}

/// The registered shapes' files given on the command line, in flag order; `H` words their help.
pub struct ShapeFiles<H> {
    files: Vec<(&'static str, PathBuf)>,
    help: PhantomData<H>,
}

impl<H> ShapeFiles<H> {
    /// The files given, each with its flag.
    pub fn given(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        self.files
            .iter()
            .map(|(flag, path)| (*flag, path.as_path()))
    }
}

/// A shape's flag's help, as `H` words it.
struct Help<H>(PhantomData<H>);

impl<H: FlagHelp> ForShape for Help<H> {
    type Output = String;
    fn with<S: ShapeRecord + SceneShape>(self) -> String
    where
        S::Contact: ResultCells,
    {
        H::help::<S>()
    }
}

/// "walls" as "Walls", the way a help text starts.
pub fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

impl<H: FlagHelp> clap::FromArgMatches for ShapeFiles<H> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut files = Self {
            files: Vec::new(),
            help: PhantomData,
        };
        files.update_from_arg_matches(matches)?;
        Ok(files)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        for &flag in SHAPE_FLAGS {
            if let Some(path) = matches.get_one::<PathBuf>(flag) {
                self.files.retain(|(given, _)| *given != flag);
                self.files.push((flag, path.clone()));
            }
        }
        Ok(())
    }
}

impl<H: FlagHelp> clap::Args for ShapeFiles<H> {
    fn augment_args(mut command: Command) -> Command {
        for &flag in SHAPE_FLAGS {
            let help = for_shape(flag, Help::<H>(PhantomData)).unwrap_or_default();
            // The value's name in usage lines, as clap derives it from a field: `<WALLS>`.
            let value_name: &'static str = Box::leak(flag.to_uppercase().into_boxed_str());
            command = command.arg(
                Arg::new(flag)
                    .long(flag)
                    .value_name(value_name)
                    .value_parser(clap::value_parser!(PathBuf))
                    .action(ArgAction::Set)
                    .help(help)
                    .group(TARGETS),
            );
        }
        command
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
