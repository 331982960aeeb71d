//! Stage 5: tensors in and out: `.npy` files and the text form.

pub mod compare;
pub mod dump;
pub mod npy;
pub mod random;
pub mod serialize;
pub mod text;
