//! The high-level passes, in the paper's order (Alg. 3); see ARCHITECTURE.md.

pub mod affine;
pub mod attach_pragmas;
pub mod comm;
pub mod dead_allocations;
pub mod device_statements;
pub mod distribute;
pub mod fold_host_update;
pub mod forward_stores;
pub mod fuse_into_reduction;
pub mod gather;
pub mod insert_sync;
pub mod join_regions;
pub mod live_out;
pub mod lower_tensor;
pub mod normalize;
pub mod outline;
pub mod promote_updates;
pub mod races;
pub mod row_block;
pub mod scalar_reductions;
pub mod shared_scalars;
pub mod split_rows;
pub mod strip_mine;
pub mod tensor;
pub mod tile_dot;
pub mod vectorize_parallel;
