//! The hash that keys a kernel's tuning cache, shared by the launchers of every form.

/// FNV-1a: a stable hash of the kernel's text for the tuning cache (the same text on every
/// platform and run, unlike std's randomly seeded hasher).
pub(super) fn text_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable_and_sees_every_byte() {
        assert_eq!(text_hash("abc"), text_hash("abc"));
        assert_ne!(text_hash("abc"), text_hash("abd"));
        assert_eq!(text_hash(""), "cbf29ce484222325");
    }
}
