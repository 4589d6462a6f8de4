//! The `callId` of each event a flusher encodes: a UUID v4, lowercase and hyphenated (docs/wire-format.md).

/// SplitMix64's increment (the golden ratio as a 64-bit odd number).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// UUID v4s for one flusher: 122 pseudorandom bits each (RFC 9562 allows pseudorandom ones),
/// from two SplitMix64 streams seeded once from the thread's CSPRNG (`uuid::Uuid::new_v4`).
///
/// A draw from the CSPRNG per event costs more than these streams. A call id names an event so that the ingest can tell it apart; it is not a secret, so it
/// needs to be unique, not unpredictable. Each stream is a bijection of its counter, so two ids
/// of one generator are equal only if both halves still match once the version and variant bits
/// are set (about one chance in 2^122 per pair), and generators seeded with 128 random bits
/// collide no more often than random ids do.
pub(crate) struct CallIds {
    hi: u64,
    lo: u64,
}

impl CallIds {
    /// A generator seeded from the thread's CSPRNG.
    pub(crate) fn new() -> Self {
        let (hi, lo) = uuid::Uuid::new_v4().as_u64_pair();
        CallIds { hi, lo }
    }

    /// A generator that draws the same ids as another of the same seed: tests compare the bytes
    /// of two flushers' events.
    #[cfg(test)]
    pub(crate) fn seeded(hi: u64, lo: u64) -> Self {
        CallIds { hi, lo }
    }

    /// The next id.
    pub(crate) fn next_id(&mut self) -> uuid::Uuid {
        self.hi = self.hi.wrapping_add(GAMMA);
        self.lo = self.lo.wrapping_add(GAMMA);
        let bits = (u128::from(mix(self.hi)) << 64) | u128::from(mix(self.lo));
        // Sets the version (4) and variant (RFC 9562) bits.
        uuid::Builder::from_random_bytes(bits.to_be_bytes()).into_uuid()
    }
}

/// SplitMix64's output function: a bijection of `u64` that spreads every input bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn call_ids_are_distinct_uuid_v4s() {
        let mut ids = CallIds::new();
        let mut seen = HashSet::new();
        for _ in 0..100_000 {
            let id = ids.next_id();
            assert_eq!(id.get_version(), Some(uuid::Version::Random));
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            assert!(seen.insert(id), "{id} repeated");
        }
        // Another generator (another flusher) starts elsewhere.
        let mut other = CallIds::new();
        assert!((0..1_000).all(|_| !seen.contains(&other.next_id())));
    }

    #[test]
    fn every_bit_but_version_and_variant_varies() {
        let mut ids = CallIds::new();
        let (mut ones, mut zeros) = (0u128, 0u128);
        for _ in 0..1_000 {
            let bits = ids.next_id().as_u128();
            ones |= bits;
            zeros |= !bits;
        }
        // The version nibble (0100) and the variant's two bits (10) are fixed; the other 122 vary.
        let fixed: u128 = (0xF << 76) | (0b11 << 62);
        assert_eq!(ones & zeros, !fixed);
    }

    #[test]
    fn the_mix_is_a_bijection_on_a_sample() {
        let outputs: HashSet<u64> = (0..100_000u64).map(|k| mix(k.wrapping_mul(GAMMA))).collect();
        assert_eq!(outputs.len(), 100_000);
    }
}
