//! CPU paths' data-parallel loops, for plugins (feature `par`; not part of the ABI): a slice cut
//! into chunks, each handed to a closure with its index, on rayon's pool or on the calling
//! thread. Each plugin decides *when* a call is worth the pool (its own size threshold, with
//! [`pool_has_threads`]); these only run the chunks.

use rayon::prelude::*;

/// Whether rayon's pool has more than one thread: with one (`RAYON_NUM_THREADS=1`, as the CPU
/// gate runs), the pool only adds its scheduling to a call.
pub fn pool_has_threads() -> bool {
    rayon::current_num_threads() > 1
}

/// Calls `f(index, chunk)` for every `chunk`-sized piece of `data`, in parallel when `parallel`.
pub fn for_each_chunk<T: Send>(
    data: &mut [T],
    chunk: usize,
    parallel: bool,
    f: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    if parallel {
        data.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| f(i, c));
    } else {
        data.chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| f(i, c));
    }
}

/// [`for_each_chunk`] over two slices cut into the same number of pieces.
pub fn for_each_chunk_pair<A: Send, B: Send>(
    a: &mut [A],
    a_chunk: usize,
    b: &mut [B],
    b_chunk: usize,
    parallel: bool,
    f: impl Fn(usize, &mut [A], &mut [B]) + Sync + Send,
) {
    if parallel {
        a.par_chunks_mut(a_chunk)
            .zip(b.par_chunks_mut(b_chunk))
            .enumerate()
            .for_each(|(i, (x, y))| f(i, x, y));
    } else {
        a.chunks_mut(a_chunk)
            .zip(b.chunks_mut(b_chunk))
            .enumerate()
            .for_each(|(i, (x, y))| f(i, x, y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_paths_visit_every_chunk_once_with_its_index() {
        for parallel in [false, true] {
            let mut v = vec![0usize; 10];
            for_each_chunk(&mut v, 3, parallel, |i, c| {
                c.iter_mut().for_each(|x| *x += i + 1)
            });
            assert_eq!(v, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]);
            let (mut a, mut b) = (vec![0usize; 4], vec![0usize; 8]);
            for_each_chunk_pair(&mut a, 1, &mut b, 2, parallel, |i, x, y| {
                x[0] = i;
                y.fill(i);
            });
            assert_eq!((a, b), (vec![0, 1, 2, 3], vec![0, 0, 1, 1, 2, 2, 3, 3]));
        }
    }
}
