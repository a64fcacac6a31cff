//! Tests of TileUnpack: CPU path against the f64 reference, the key rule by hand, the i32 key
//! limit and the declared work.

use super::*;
use crate::{
    case::OpKernel,
    harness::{assert_cpu_checks, small_shape},
    op::{Inputs, TileOp},
    selection::origins,
};
use apex_plugin_api::{
    ParamValue::{self, Bool, Float, Int, Str},
    Tolerance,
};

fn with(
    mut o: Vec<(&'static str, ParamValue)>,
    extra: &[(&'static str, ParamValue)],
) -> Vec<(&'static str, ParamValue)> {
    o.extend(extra.iter().cloned());
    o
}

#[test]
fn override_is_exact_with_duplicates_levels_empty_slots_and_offgrid_origins() {
    let kernel = OpKernel::<TileUnpack>::default();
    for tile in [4, 8, 16] {
        for offgrid in [false, true] {
            let o = with(
                small_shape(2, 3, 64, tile, 24),
                &[
                    ("ids", Str("overlap".into())),
                    ("levels", Int(3)),
                    ("offgrid", Bool(offgrid)),
                ],
            );
            assert_cpu_checks(&kernel, &o, |_| Tolerance::EXACT);
        }
        let o = with(
            small_shape(2, 3, 64, tile, 8),
            &[("ids", Str("sorted".into()))],
        );
        assert_cpu_checks(&kernel, &o, |_| Tolerance::EXACT);
    }
}

#[test]
fn blend_is_within_tolerance_with_overlaps() {
    let kernel = OpKernel::<TileUnpack>::default();
    for offgrid in [false, true] {
        let o = with(
            small_shape(2, 3, 32, 8, 20),
            &[
                ("ids", Str("overlap".into())),
                ("mode", Str("blend".into())),
                ("alpha", Float(0.3)),
                ("offgrid", Bool(offgrid)),
            ],
        );
        assert_cpu_checks(&kernel, &o, Tolerance::default_for);
    }
}

fn hand_case(mode: &str, ids: Vec<i32>, levels: Vec<i32>) -> (TileUnpack, Vec<f32>) {
    let kernel = OpKernel::<TileUnpack>::default();
    let o = with(
        small_shape(1, 1, 8, 4, ids.len() as i64),
        &[
            ("ids", Str("overlap".into())),
            ("mode", Str(mode.into())),
            ("alpha", Float(0.25)),
        ],
    );
    let op = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap();
    let s = op.shape;
    let org = origins(&s, &ids, false);
    // Slot k's tile holds the value k + 2 everywhere; base is 1.
    let p: Vec<f32> = (0..s.tiles_len())
        .map(|i| (i / s.tile_block()) as f32 + 2.0)
        .collect();
    let inputs = Inputs {
        data: vec![vec![1.0f32; s.map_len()], p],
        ints: vec![ids, levels, org],
    };
    let mut out = vec![vec![f32::NAN; s.map_len()]];
    op.run_cpu(&inputs, &mut out, &mut op.cpu_scratch());
    let reference = op.reference(&inputs);
    assert_eq!(
        out[0].iter().map(|&v| f64::from(v)).collect::<Vec<_>>(),
        reference
    );
    (op, out.remove(0))
}

#[test]
fn the_highest_key_wins_a_higher_level_then_the_later_slot() {
    // Slots 0..3 all name tile 0 (pixels 0..4 of rows 0..4 in the 8x8 map); slot 4 is empty.
    let (_, out) = hand_case("override", vec![0, 0, 0, -1], vec![2, 1, 2, 5]);
    // Levels 2, 1, 2: slot 2 (level 2, later than slot 0) wins and writes 2 + 2.
    assert_eq!(out[0], 4.0);
    let (_, out) = hand_case("override", vec![0, 0, 1, 99], vec![3, 0, 0, 0]);
    assert_eq!(out[0], 2.0, "level 3 beats a later level-0 slot");
    assert_eq!(out[4], 4.0, "tile 1 written by slot 2");
    assert_eq!(
        out[4 * 8 + 4],
        1.0,
        "uncovered tile 3 keeps base; id 99 is skipped"
    );
}

#[test]
fn blend_applies_tiles_in_ascending_key_order() {
    // A single tile: (1 - 0.25) * 1 + 0.25 * 2 = 1.25.
    let (_, out) = hand_case("blend", vec![0], vec![0]);
    assert_eq!(out[0], 1.25);
    // Two slots on tile 0, slot 0 at the higher level, so slot 1 (value 3) blends first:
    // 0.75 * 1 + 0.25 * 3 = 1.5, then slot 0 (value 2): 0.75 * 1.5 + 0.25 * 2 = 1.625.
    let (_, out) = hand_case("blend", vec![0, 0], vec![1, 0]);
    assert_eq!(out[0], 1.625);
}

#[test]
fn order_bits_match_the_python_reference() {
    assert_eq!(order_bits(1), 1);
    assert_eq!(order_bits(2), 1);
    assert_eq!(order_bits(32), 5);
    assert_eq!(order_bits(33), 6);
}

#[test]
fn keys_that_overflow_i32_are_rejected() {
    let kernel = OpKernel::<TileUnpack>::default();
    let o = with(small_shape(1, 1, 64, 8, 64), &[("levels", Int(1 << 26))]);
    let err = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap_err();
    assert!(err.message.contains("i32"), "{err}");
}

#[test]
fn declared_bytes_follow_the_actual_selection() {
    let kernel = OpKernel::<TileUnpack>::default();
    // 64x64 at t = 16 is a 4x4 grid; 16 sorted unique ids cover every pixel: base is never read.
    let o = small_shape(1, 2, 64, 16, 16);
    let op = TileUnpack::plan(&crate::harness::params(&kernel, &o)).unwrap();
    let s = op.shape;
    let inputs = op.generate::<f32>(1);
    let w = op.work(&inputs);
    assert_eq!(w.bytes_read, (s.map_len() * 4 + 16 * s.slots()) as u64);
    assert_eq!(w.bytes_written, (s.map_len() * 4) as u64);
    // Half the slots empty: their pixels come from base, still one read per output element.
    let mut half = inputs.clone();
    half.ints[0][..8].fill(-1);
    let w = op.work(&half);
    assert_eq!(w.bytes_read, (s.map_len() * 4 + 16 * s.slots()) as u64);
    assert_eq!(w.items, 8.0);
    // Blend reads base everywhere plus every window.
    let b = with(o, &[("mode", Str("blend".into()))]);
    let op = TileUnpack::plan(&crate::harness::params(&kernel, &b)).unwrap();
    let w = op.work(&half);
    assert_eq!(
        w.bytes_read,
        ((s.map_len() * 3 / 2) * 4 + 16 * s.slots()) as u64
    );
}
