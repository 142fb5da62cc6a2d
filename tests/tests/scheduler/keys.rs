//! Sort keys hold the state's dense ids. While every id fits its field the batch stage
//! reads batch boundaries off the sorted keys; past a field's width ids share a value and
//! the batches still split by the real ids.

use super::*;

/// 4106 meshes, so meshes 4096 apart share the key's mesh field: objects of one material
/// on mesh 2 and mesh 4098, alternating along the view direction, sit next to each other in
/// the sorted queue with equal state fields. Each must still be a batch of its own (real
/// ids), on 1 and 3 threads, against the reference every frame.
#[test]
fn meshes_past_the_keys_mesh_field_still_batch_by_their_ids() {
    let run = |threads: usize| {
        let mut w = world(threads, true, 2);
        let extra: Vec<MeshHandle> = (0..4100).map(|_| w.r.create_mesh(&cube()).unwrap()).collect();
        // Dense mesh ids follow creation: the world's six meshes are 0-5, `extra[j]` is 6 + j.
        let (a, b) = (w.meshes[2], extra[4098 - 6]);
        let descs: Vec<ObjectDesc> = (0..200)
            .map(|k| ObjectDesc {
                mesh: if k % 2 == 0 { a } else { b },
                material: w.materials[0],
                transform: Mat4::from_translation(Vec3::new(30.0 - k as f32 * 0.3, 1.0, 0.0)),
                layer: 0,
                flags: CASTS_SHADOWS,
            })
            .collect();
        w.r.insert_objects(&descs).unwrap();
        let mut digests = Vec::new();
        for f in 0..3 {
            let vs = views(f as f32 * 0.01);
            let stats = w.r.render(&vs).unwrap();
            w.r.flush().unwrap();
            assert_matches_reference(&w, &vs, &stats, f);
            let main = w.r.view_output(0).unwrap();
            assert!(main.queue.len() >= 150, "most of the line is in view: {}", main.queue.len());
            assert_eq!(main.batches.len(), main.queue.len(), "alternating meshes never share a batch");
            digests.push(stats.digest.unwrap());
        }
        digests
    };
    assert_eq!(run(1), run(3));
}

/// One material and six meshes: each draw state holds thousands of objects, as a state
/// of indexed materials does. As the camera orbits, their opaque keys' depths must tie
/// where distances nearly do (log-spaced steps), so last frame's order stays nearly
/// sorted: every frame after the first sorts every view on the nearly-sorted path (a
/// 16-bit linear depth field reorders about a tenth of each state's neighbours per frame
/// here, and the radix sort runs). The queues still match the reference.
#[test]
fn large_states_stay_nearly_sorted_as_the_camera_moves() {
    let mut w = world(2, true, 1);
    populate(&mut w, 9, 40_000);
    for f in 0..12 {
        let vs = views(f as f32 * 0.02);
        let stats = w.r.render(&vs).unwrap();
        w.r.flush().unwrap();
        if f > 0 {
            assert_eq!(stats.sorts_from_last_order, stats.views, "frame {f}: sorts from last frame's order");
            assert_eq!(stats.sorts_nearly_in_order, stats.views, "frame {f}: sorts nearly in order");
        }
        assert_matches_reference(&w, &vs, &stats, f);
    }
    assert!(w.r.view_output(0).unwrap().queue.len() > 5_000, "the orbit sees much of the scene");
}

/// A still camera over a still scene: from the second frame on, every view culls from what
/// the last frame culled it from and keeps its cull, sort and batch outputs without running
/// them. One change at a time ends that for the frame it happens in: an object moved into
/// the middle of the view, then removed (the last object takes its place), a new one, the
/// main camera (the still light's view keeps its outputs), a keyword that changes a
/// material's variant and so its keys, and one that changes none. Where a view's cull runs
/// and finds last frame's objects with last frame's keys, its queue is kept without a sort.
/// Every frame matches the reference, and the command streams are the same on 1 and 3
/// threads.
#[test]
fn still_views_keep_their_queues_until_something_changes() {
    let run = |threads: usize| {
        let mut w = world(threads, true, 4);
        let ids = populate(&mut w, 5, 3_000);
        let mut digests = Vec::new();
        for f in 0..12 {
            match f {
                3 => w.r.set_transforms(&[(ids[10], Mat4::from_translation(Vec3::new(0.0, 1.0, 2.0)))]).unwrap(),
                5 => w.r.remove_objects(&[ids[10]]).unwrap(),
                6 => {
                    let desc = ObjectDesc {
                        mesh: w.meshes[1],
                        material: w.materials[2],
                        transform: Mat4::from_translation(Vec3::new(0.0, 1.0, -2.0)),
                        layer: 0,
                        flags: CASTS_SHADOWS,
                    };
                    w.r.insert_objects(&[desc]).unwrap();
                }
                // RIM is declared by the lit shader: its materials' variants change. FOO is
                // declared by none: no material changes.
                9 => w.r.set_global_keyword("RIM", true),
                11 => w.r.set_global_keyword("FOO", true),
                _ => {}
            }
            let vs = views(if f >= 8 { 0.5 } else { 0.4 });
            let stats = w.r.render(&vs).unwrap();
            w.r.flush().unwrap();
            assert_matches_reference(&w, &vs, &stats, f);
            let culled = stats.views - stats.gpu_culled_views;
            assert!(culled > 0, "frame {f}: some view culled on the CPU");
            match f {
                0 => assert_eq!(stats.sorts_unchanged, 0, "frame 0: nothing to keep"),
                1 | 2 | 4 | 7 | 10 | 11 => {
                    assert_eq!(stats.sorts_unchanged, culled, "frame {f}: a still frame keeps every queue")
                }
                _ => assert!(stats.sorts_unchanged < culled, "frame {f}: the change reaches a queue"),
            }
            let kept = match f {
                1 | 2 | 4 | 7 | 10 | 11 => culled,
                8 => culled - 1,
                _ => 0,
            };
            assert_eq!(stats.culls_kept, kept, "frame {f}: views culled from what the last frame culled them from");
            digests.push(stats.digest.unwrap());
        }
        digests
    };
    assert_eq!(run(1), run(3));
}
