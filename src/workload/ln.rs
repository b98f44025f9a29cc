//! Natural logarithms of many values at once, bit for bit what [`f64::ln`] gives one at a
//! time: the exponential delays of a broadcast's copies are drawn this way (499 logarithms a
//! broadcast at n = 500), and every figure depends on those delays to the last bit.
//!
//! On x86-64 Linux with glibc (2.28 or later), `f64::ln` is glibc's `log`, which runs its FMA
//! variant (`__log_fma`) when the CPU has AVX2 and FMA. [`ln_all`] runs that same algorithm,
//! four values at a time, on those CPUs: the same table, the same polynomials and the same
//! fused operations in the same order as glibc's machine code (read from `__log_fma` of
//! glibc 2.36; the algorithm is Szabolcs Nagy's `log` from Arm's optimized-routines, glibc's
//! `sysdeps/ieee754/dbl-64/e_log.c` and `e_log_data.c`, whose values `TAB` and the
//! constants below are). A fused multiply-add rounds once whatever the lane, so four lanes
//! give exactly what one call gives. Anywhere else (another libm, a CPU without FMA, where
//! glibc itself runs another variant), it calls `f64::ln` for each value.
//!
//! What it saves, per value: a call through the PLT into glibc's wrapper (`log@@GLIBC_2.29`
//! checks its argument, then jumps to the variant), the random generator's state spilled
//! around that call in the drawing loop, and three lanes' worth of arithmetic. Two gathers
//! for the table were slower than four 16-byte loads on this machine's AMD cores.

/// `ln(x)` in place of each `x`: `xs[i]` becomes `xs[i].ln()`, bit for bit.
pub(crate) fn ln_all(xs: &mut [f64]) {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    if fma::usable() {
        // SAFETY: `usable` found the two features `fma::ln_all` is compiled for.
        unsafe { fma::ln_all(xs) };
        return;
    }
    for x in xs {
        *x = x.ln();
    }
}

#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
mod fma {
    use std::arch::x86_64::*;

    /// glibc's `log_data.tab`: for each of the 128 subintervals of [OFF, 2·OFF), 1/c and
    /// log(c) for a c near its centre, as bits.
    #[rustfmt::skip]
    const TAB: [u64; 256] = [
        0x3ff734f0c3e0de9f, 0xbfd7cc7f79e69000, 0x3ff713786a2ce91f, 0xbfd76feec20d0000,
        0x3ff6f26008fab5a0, 0xbfd713e31351e000, 0x3ff6d1a61f138c7d, 0xbfd6b85b38287800,
        0x3ff6b1490bc5b4d1, 0xbfd65d5590807800, 0x3ff69147332f0cba, 0xbfd602d076180000,
        0x3ff6719f18224223, 0xbfd5a8ca86909000, 0x3ff6524f99a51ed9, 0xbfd54f4356035000,
        0x3ff63356aa8f24c4, 0xbfd4f637c36b4000, 0x3ff614b36b9ddc14, 0xbfd49da7fda85000,
        0x3ff5f66452c65c4c, 0xbfd445923989a800, 0x3ff5d867b5912c4f, 0xbfd3edf439b0b800,
        0x3ff5babccb5b90de, 0xbfd396ce448f7000, 0x3ff59d61f2d91a78, 0xbfd3401e17bda000,
        0x3ff5805612465687, 0xbfd2e9e2ef468000, 0x3ff56397cee76bd3, 0xbfd2941b3830e000,
        0x3ff54725e2a77f93, 0xbfd23ec58cda8800, 0x3ff52aff42064583, 0xbfd1e9e129279000,
        0x3ff50f22dbb2bddf, 0xbfd1956d2b48f800, 0x3ff4f38f4734ded7, 0xbfd141679ab9f800,
        0x3ff4d843cfde2840, 0xbfd0edd094ef9800, 0x3ff4bd3ec078a3c8, 0xbfd09aa518db1000,
        0x3ff4a27fc3e0258a, 0xbfd047e65263b800, 0x3ff4880524d48434, 0xbfcfeb224586f000,
        0x3ff46dce1b192d0b, 0xbfcf474a7517b000, 0x3ff453d9d3391854, 0xbfcea4443d103000,
        0x3ff43a2744b4845a, 0xbfce020d44e9b000, 0x3ff420b54115f8fb, 0xbfcd60a22977f000,
        0x3ff40782da3ef4b1, 0xbfccc00104959000, 0x3ff3ee8f5d57fe8f, 0xbfcc202956891000,
        0x3ff3d5d9a00b4ce9, 0xbfcb81178d811000, 0x3ff3bd60c010c12b, 0xbfcae2c9ccd3d000,
        0x3ff3a5242b75dab8, 0xbfca45402e129000, 0x3ff38d22cd9fd002, 0xbfc9a877681df000,
        0x3ff3755bc5847a1c, 0xbfc90c6d69483000, 0x3ff35dce49ad36e2, 0xbfc87120a645c000,
        0x3ff34679984dd440, 0xbfc7d68fb4143000, 0x3ff32f5cceffcb24, 0xbfc73cb83c627000,
        0x3ff3187775a10d49, 0xbfc6a39a9b376000, 0x3ff301c8373e3990, 0xbfc60b3154b7a000,
        0x3ff2eb4ebb95f841, 0xbfc5737d76243000, 0x3ff2d50a0219a9d1, 0xbfc4dc7b8fc23000,
        0x3ff2bef9a8b7fd2a, 0xbfc4462c51d20000, 0x3ff2a91c7a0c1bab, 0xbfc3b08abc830000,
        0x3ff293726014b530, 0xbfc31b996b490000, 0x3ff27dfa5757a1f5, 0xbfc2875490a44000,
        0x3ff268b39b1d3bbf, 0xbfc1f3b9f879a000, 0x3ff2539d838ff5bd, 0xbfc160c8252ca000,
        0x3ff23eb7aac9083b, 0xbfc0ce7f57f72000, 0x3ff22a012ba940b6, 0xbfc03cdc49fea000,
        0x3ff2157996cc4132, 0xbfbf57bdbc4b8000, 0x3ff201201dd2fc9b, 0xbfbe370896404000,
        0x3ff1ecf4494d480b, 0xbfbd17983ef94000, 0x3ff1d8f5528f6569, 0xbfbbf9674ed8a000,
        0x3ff1c52311577e7c, 0xbfbadc79202f6000, 0x3ff1b17c74cb26e9, 0xbfb9c0c3e7288000,
        0x3ff19e010c2c1ab6, 0xbfb8a646b372c000, 0x3ff18ab07bb670bd, 0xbfb78d01b3ac0000,
        0x3ff1778a25efbcb6, 0xbfb674f145380000, 0x3ff1648d354c31da, 0xbfb55e0e6d878000,
        0x3ff151b990275fdd, 0xbfb4485cdea1e000, 0x3ff13f0ea432d24c, 0xbfb333d94d6aa000,
        0x3ff12c8b7210f9da, 0xbfb22079f8c56000, 0x3ff11a3028ecb531, 0xbfb10e4698622000,
        0x3ff107fbda8434af, 0xbfaffa6c6ad20000, 0x3ff0f5ee0f4e6bb3, 0xbfadda8d4a774000,
        0x3ff0e4065d2a9fce, 0xbfabbcece4850000, 0x3ff0d244632ca521, 0xbfa9a1894012c000,
        0x3ff0c0a77ce2981a, 0xbfa788583302c000, 0x3ff0af2f83c636d1, 0xbfa5715e67d68000,
        0x3ff09ddb98a01339, 0xbfa35c8a49658000, 0x3ff08cabaf52e7df, 0xbfa149e364154000,
        0x3ff07b9f2f4e28fb, 0xbf9e72c082eb8000, 0x3ff06ab58c358f19, 0xbf9a55f152528000,
        0x3ff059eea5ecf92c, 0xbf963d62cf818000, 0x3ff04949cdd12c90, 0xbf9228fb8caa0000,
        0x3ff038c6c6f0ada9, 0xbf8c317b20f90000, 0x3ff02865137932a9, 0xbf8419355daa0000,
        0x3ff0182427ea7348, 0xbf781203c2ec0000, 0x3ff008040614b195, 0xbf60040979240000,
        0x3fefe01ff726fa1a, 0x3f6feff384900000, 0x3fefa11cc261ea74, 0x3f87dc41353d0000,
        0x3fef6310b081992e, 0x3f93cea3c4c28000, 0x3fef25f63ceeadcd, 0x3f9b9fc114890000,
        0x3feee9c8039113e7, 0x3fa1b0d8ce110000, 0x3feeae8078cbb1ab, 0x3fa58a5bd001c000,
        0x3fee741aa29d0c9b, 0x3fa95c8340d88000, 0x3fee3a91830a99b5, 0x3fad276aef578000,
        0x3fee01e009609a56, 0x3fb07598e598c000, 0x3fedca01e577bb98, 0x3fb253f5e30d2000,
        0x3fed92f20b7c9103, 0x3fb42edd8b380000, 0x3fed5cac66fb5cce, 0x3fb606598757c000,
        0x3fed272caa5ede9d, 0x3fb7da76356a0000, 0x3fecf26e3e6b2ccd, 0x3fb9ab434e1c6000,
        0x3fecbe6da2a77902, 0x3fbb78c7bb0d6000, 0x3fec8b266d37086d, 0x3fbd431332e72000,
        0x3fec5894bd5d5804, 0x3fbf0a3171de6000, 0x3fec26b533bb9f8c, 0x3fc067152b914000,
        0x3febf583eeece73f, 0x3fc147858292b000, 0x3febc4fd75db96c1, 0x3fc2266ecdca3000,
        0x3feb951e0c864a28, 0x3fc303d7a6c55000, 0x3feb65e2c5ef3e2c, 0x3fc3dfc33c331000,
        0x3feb374867c9888b, 0x3fc4ba366b7a8000, 0x3feb094b211d304a, 0x3fc5933928d1f000,
        0x3feadbe885f2ef7e, 0x3fc66acd2418f000, 0x3feaaf1d31603da2, 0x3fc740f8ec669000,
        0x3fea82e63fd358a7, 0x3fc815c0f51af000, 0x3fea5740ef09738b, 0x3fc8e92954f68000,
        0x3fea2c2a90ab4b27, 0x3fc9bb3602f84000, 0x3fea01a01393f2d1, 0x3fca8bed1c2c0000,
        0x3fe9d79f24db3c1b, 0x3fcb5b515c01d000, 0x3fe9ae2505c7b190, 0x3fcc2967ccbcc000,
        0x3fe9852ef297ce2f, 0x3fccf635d5486000, 0x3fe95cbaeea44b75, 0x3fcdc1bd3446c000,
        0x3fe934c69de74838, 0x3fce8c01b8cfe000, 0x3fe90d4f2f6752e6, 0x3fcf5509c0179000,
        0x3fe8e6528effd79d, 0x3fd00e6c121fb800, 0x3fe8bfce9fcc007c, 0x3fd071b80e93d000,
        0x3fe899c0dabec30e, 0x3fd0d46b9e867000, 0x3fe87427aa2317fb, 0x3fd13687334bd000,
        0x3fe84f00acb39a08, 0x3fd1980d67234800, 0x3fe82a49e8653e55, 0x3fd1f8ffe0cc8000,
        0x3fe8060195f40260, 0x3fd2595fd7636800, 0x3fe7e22563e0a329, 0x3fd2b9300914a800,
        0x3fe7beb377dcb5ad, 0x3fd3187210436000, 0x3fe79baa679725c2, 0x3fd377266dec1800,
        0x3fe77907f2170657, 0x3fd3d54ffbaf3000, 0x3fe756cadbd6130c, 0x3fd432eee32fe000,
    ];

    /// The subintervals' origin: 0x3fe6000000000000 is 0.6875.
    const OFF: i64 = 0x3fe6_0000_0000_0000;
    /// Inputs in [LO, HI) take the path for values near 1: 1 − 2⁻⁴ and 1 + 0x1.09p−4.
    const LO: i64 = 0x3fee_0000_0000_0000;
    const HI: i64 = 0x3ff1_0900_0000_0000;
    /// ln 2 in two parts.
    const LN2HI: u64 = 0x3fe6_2e42_fefa_3800;
    const LN2LO: u64 = 0x3d2e_f357_93c7_6730;
    /// `log_data.poly` (A[0..5]): log1p(r) − r ≈ A0·r² + A1·r³ + … on a subinterval.
    const A: [u64; 5] = [
        0xbfe0_0000_0000_0001,
        0x3fd5_5555_5551_305b,
        0xbfcf_ffff_ffeb_4590,
        0x3fc9_99b3_24f1_0111,
        0xbfc5_5575_e506_c89f,
    ];
    /// `log_data.poly1` (B[0..11]): log1p(r) near 1, B0 = −0.5.
    const B: [u64; 11] = [
        0xbfe0_0000_0000_0000,
        0x3fd5_5555_5555_5577,
        0xbfcf_ffff_ffff_fdcb,
        0x3fc9_9999_9995_dd0c,
        0xbfc5_5555_5567_45a7,
        0x3fc2_4924_a344_de30,
        0xbfbf_ffff_a442_3d65,
        0x3fbc_7184_282a_d6ca,
        0xbfb9_99eb_43b0_68ff,
        0x3fb7_8182_f7af_d085,
        0xbfb5_5213_75d1_45cd,
    ];

    /// Whether this CPU runs glibc's FMA variant: AVX2 and FMA, as glibc's selector asks.
    pub(super) fn usable() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// Four values at a time; a group with a value outside the normal positive range (zero,
    /// negative, subnormal, infinite, NaN) goes to `f64::ln` as a whole, and a short last
    /// group is padded with ones.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn ln_all(xs: &mut [f64]) {
        let mut chunks = xs.chunks_exact_mut(4);
        for c in &mut chunks {
            // SAFETY: `c` is four f64 (32 bytes); unaligned loads and stores are allowed.
            let x = unsafe { _mm256_loadu_pd(c.as_ptr()) };
            match ln4(x) {
                // SAFETY: as the load.
                Some(y) => unsafe { _mm256_storeu_pd(c.as_mut_ptr(), y) },
                None => c.iter_mut().for_each(|x| *x = x.ln()),
            }
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let mut pad = [1.0; 4];
            pad[..rest.len()].copy_from_slice(rest);
            ln_all(&mut pad);
            rest.copy_from_slice(&pad[..rest.len()]);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    fn splat(bits: u64) -> __m256d {
        _mm256_castsi256_pd(_mm256_set1_epi64x(bits as i64))
    }

    /// `log(x)` of four normal positive values as `__log_fma` computes each; None when a
    /// value is not one (glibc's special cases, left to it).
    #[target_feature(enable = "avx2,fma")]
    fn ln4(x: __m256d) -> Option<__m256d> {
        let ix = _mm256_castpd_si256(x);
        // top16(x) − 0x0010 < 0x7ff0 − 0x0010: normal and positive.
        let top = _mm256_srli_epi64::<48>(ix);
        let normal = _mm256_and_si256(
            _mm256_cmpgt_epi64(top, _mm256_set1_epi64x(0x000f)),
            _mm256_cmpgt_epi64(_mm256_set1_epi64x(0x7ff0), top),
        );
        if _mm256_movemask_pd(_mm256_castsi256_pd(normal)) != 0b1111 {
            return None;
        }
        let near = _mm256_and_si256(
            _mm256_cmpgt_epi64(ix, _mm256_set1_epi64x(LO - 1)),
            _mm256_cmpgt_epi64(_mm256_set1_epi64x(HI), ix),
        );
        let far = far(ix);
        Some(if _mm256_testz_si256(near, near) != 0 {
            far
        } else {
            _mm256_blendv_pd(far, near1(x), _mm256_castsi256_pd(near))
        })
    }

    /// The main path: x = 2^k·z with z in [OFF, 2·OFF), log(x) = log1p(z/c − 1) + log(c) +
    /// k·ln 2. Each line is one instruction of `__log_fma`'s, in its order of rounding.
    #[target_feature(enable = "avx2,fma")]
    fn far(ix: __m256i) -> __m256d {
        let tmp = _mm256_sub_epi64(ix, _mm256_set1_epi64x(OFF));
        // i = (tmp >> 45) % 128; TAB[2i..2i + 2] is (invc, logc), read as one 16-byte pair
        // per lane (four such loads and two unpacks cost less than two gathers here).
        let idx = _mm256_and_si256(_mm256_srli_epi64::<44>(tmp), _mm256_set1_epi64x(0xfe));
        let pair = |i: i64| {
            // SAFETY: i is even and at most 254, so TAB[i] and TAB[i + 1] exist.
            unsafe { _mm_loadu_pd(TAB.as_ptr().cast::<f64>().add(i as usize)) }
        };
        let lo2 = _mm256_castsi256_si128(idx);
        let hi2 = _mm256_extracti128_si256::<1>(idx);
        let (p0, p1) = (
            pair(_mm_cvtsi128_si64(lo2)),
            pair(_mm_extract_epi64::<1>(lo2)),
        );
        let (p2, p3) = (
            pair(_mm_cvtsi128_si64(hi2)),
            pair(_mm_extract_epi64::<1>(hi2)),
        );
        let (a, b) = (_mm256_set_m128d(p2, p0), _mm256_set_m128d(p3, p1));
        let (invc, logc) = (_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
        // k = tmp >> 52 (arithmetic): the high halves' top 12 bits, as four i32, exact in f64.
        let k32 = _mm256_permutevar8x32_epi32(
            _mm256_srai_epi32::<20>(tmp),
            _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7),
        );
        let kd = _mm256_cvtepi32_pd(_mm256_castsi256_si128(k32));
        let iz = _mm256_sub_epi64(
            ix,
            _mm256_and_si256(tmp, _mm256_set1_epi64x(0xfff0_0000_0000_0000_u64 as i64)),
        );
        let z = _mm256_castsi256_pd(iz);
        let w = _mm256_fmadd_pd(kd, splat(LN2HI), logc); // w = kd·Ln2hi + logc
        let r = _mm256_fmadd_pd(z, invc, splat((-1.0f64).to_bits())); // r = z·invc − 1
        let a12 = _mm256_fmadd_pd(r, splat(A[2]), splat(A[1]));
        let hi = _mm256_add_pd(r, w);
        let r2 = _mm256_mul_pd(r, r);
        let lo = _mm256_add_pd(_mm256_sub_pd(w, hi), r);
        let lo = _mm256_fmadd_pd(kd, splat(LN2LO), lo); // lo = w − hi + r + kd·Ln2lo
        let r3 = _mm256_mul_pd(r, r2);
        let a34 = _mm256_fmadd_pd(r, splat(A[4]), splat(A[3]));
        let lo = _mm256_fmadd_pd(r2, splat(A[0]), lo);
        let p = _mm256_fmadd_pd(a34, r2, a12);
        // y = lo + r2·A0 + r³·(A1 + r·A2 + r2·(A3 + r·A4)) + hi
        _mm256_add_pd(_mm256_fmadd_pd(r3, p, lo), hi)
    }

    /// The path near 1 (x in [1 − 2⁻⁴, 1 + 0x1.09p−4)), r = x − 1 exact; as `far`, one line
    /// an instruction. x = 1 gives +0, as glibc's own test for it does.
    #[target_feature(enable = "avx2,fma")]
    fn near1(x: __m256d) -> __m256d {
        let r = _mm256_sub_pd(x, splat(1.0f64.to_bits()));
        let p1 = _mm256_fmadd_pd(r, splat(B[2]), splat(B[1]));
        let p2 = _mm256_fmadd_pd(r, splat(B[5]), splat(B[4]));
        let r2 = _mm256_mul_pd(r, r);
        let p3 = _mm256_fmadd_pd(r, splat(B[8]), splat(B[7]));
        let p1 = _mm256_fmadd_pd(r2, splat(B[3]), p1);
        let p2 = _mm256_fmadd_pd(r2, splat(B[6]), p2);
        let r3 = _mm256_mul_pd(r, r2);
        let p3 = _mm256_fmadd_pd(r2, splat(B[9]), p3);
        let p3 = _mm256_fmadd_pd(r3, splat(B[10]), p3);
        let q = _mm256_fmadd_pd(p3, r3, p2);
        let q = _mm256_fmadd_pd(q, r3, p1);
        // rhi = r + r·2^27 − r·2^27, rlo = r − rhi
        let two27 = splat(0x41a0_0000_0000_0000);
        let rw = _mm256_fmadd_pd(r, two27, r);
        let rhi = _mm256_fnmadd_pd(two27, r, rw);
        let rhi2 = _mm256_mul_pd(rhi, rhi);
        let rlo = _mm256_sub_pd(r, rhi);
        let hi = _mm256_fmadd_pd(rhi2, splat(B[0]), r); // hi = r + rhi²·B0
        let lo = _mm256_fmadd_pd(rhi2, splat(B[0]), _mm256_sub_pd(r, hi)); // lo = r − hi + rhi²·B0
        let lo = _mm256_fmadd_pd(_mm256_mul_pd(splat(B[0]), rlo), _mm256_add_pd(r, rhi), lo); // lo += B0·rlo·(rhi + r)
                                                                                              // y = r³·(B1 + …) + lo + hi
        _mm256_add_pd(hi, _mm256_fmadd_pd(q, r3, lo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Rng;

    /// Values of every kind: `1 − u` as the delays draw them, random positive normals, the
    /// edges of the paths near 1, and glibc's special cases.
    fn inputs() -> Vec<f64> {
        let mut rng = Rng::new(35, 1);
        let mut xs: Vec<f64> = (0..400_000).map(|_| 1.0 - rng.next_f64()).collect();
        xs.extend((0..200_000).map(|_| f64::from_bits(rng.below(0x7ff0_0000_0000_0000))));
        let one = 1.0f64.to_bits();
        for bits in [
            one,
            one - 1,
            one + 1,
            0x3fee_0000_0000_0000,
            0x3fee_0000_0000_0000 - 1,
            0x3ff1_0900_0000_0000,
            0x3ff1_0900_0000_0000 - 1,
            0x3fe6_0000_0000_0000,
            0x3ca0_0000_0000_0000, // 2^-53, the smallest 1 − u
            1,                     // the smallest subnormal
        ] {
            xs.push(f64::from_bits(bits));
        }
        xs.extend([
            f64::MIN_POSITIVE,
            f64::MAX,
            0.0,
            -0.0,
            -1.0,
            f64::INFINITY,
            2.0,
            0.5,
        ]);
        xs
    }

    fn same_as_ln(got: &[f64], xs: &[f64]) {
        for (g, x) in got.iter().zip(xs) {
            let want = x.ln();
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "ln({x:e}) = {want:e} ({:#x}), got {g:e} ({:#x})",
                want.to_bits(),
                g.to_bits()
            );
        }
    }

    #[test]
    fn ln_all_is_f64_ln_bit_for_bit() {
        let xs = inputs();
        let mut got = xs.clone();
        ln_all(&mut got);
        same_as_ln(&got, &xs);
        // Every length's last group (padded), and special values inside a group of four.
        for len in 0..10 {
            let xs: Vec<f64> =
                [0.3, 1.0, f64::NAN, 0.97, 7.5, 0.0, 0.001, 1.02, 0.6, 0.8][..len].to_vec();
            let mut got = xs.clone();
            ln_all(&mut got);
            same_as_ln(&got, &xs);
        }
    }

    /// The four-lane port itself against glibc's `log`, where glibc runs the variant it
    /// copies (so a fallback to `f64::ln` cannot hide a wrong port).
    #[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_port_is_glibc_log_fma() {
        if !fma::usable() {
            eprintln!("no AVX2 and FMA here: glibc runs another variant, the port is not used");
            return;
        }
        let xs = inputs();
        let mut got = xs.clone();
        // SAFETY: `usable` found AVX2 and FMA.
        unsafe { fma::ln_all(&mut got) };
        same_as_ln(&got, &xs);
        // And the paths a group of four takes: all far, all near 1, mixed.
        for group in [
            [0.3, 0.2, 0.01, 0.7],
            [0.95, 1.0, 0.99, 0.9999],
            [0.95, 0.3, 1.0, 0.5],
        ] {
            let mut got = group;
            // SAFETY: as above.
            unsafe { fma::ln_all(&mut got) };
            same_as_ln(&got, &group);
        }
    }
}
