"""ICU's UScriptCode numbers for Unicode's Script property (TF's UnicodeScript op returns
uscript_getScript's value).

Python's `unicodedata` has no Script property; fontTools (a dependency of matplotlib,
which tensorflux depends on) ships Unicode's Scripts.txt, which gives each code point its
ISO 15924 code ("Latn"). ICU numbers those codes in the order of its uscript.h enum,
listed here. Scripts newer than this table (Unicode 16 and later) answer 103, USCRIPT_UNKNOWN,
as TF1.15's ICU 64 (Unicode 12.1) also does for every character it predates. Values
outside 0..0x10FFFF answer -1 (USCRIPT_INVALID_CODE), as in TF.
"""

from __future__ import annotations

import bisect
import functools

# uscript.h's UScriptCode enum, 0 (USCRIPT_COMMON) to 199 (USCRIPT_NAG_MUNDARI).
_ICU_ORDER = """
Zyyy Zinh Arab Armn Beng Bopo Cher Copt Cyrl Dsrt Deva Ethi Geor Goth Grek Gujr Guru Hani
Hang Hebr Hira Knda Kana Khmr Laoo Latn Mlym Mong Mymr Ogam Ital Orya Runr Sinh Syrc Taml
Telu Thaa Thai Tibt Cans Yiii Tglg Hano Buhd Tagb Brai Cprt Limb Linb Osma Shaw Tale Ugar
Hrkt Bugi Glag Khar Sylo Talu Tfng Xpeo Bali Batk Blis Brah Cham Cirt Cyrs Egyd Egyh Egyp
Geok Hans Hant Hmng Hung Inds Java Kali Latf Latg Lepc Lina Mand Maya Mero Nkoo Orkh Perm
Phag Phnx Plrd Roro Sara Syre Syrj Syrn Teng Vaii Visp Xsux Zxxx Zzzz Cari Jpan Lana Lyci
Lydi Olck Rjng Saur Sgnw Sund Moon Mtei Armi Avst Cakm Kore Kthi Mani Phli Phlp Phlv Prti
Samr Tavt Zmth Zsym Bamu Lisu Nkgb Sarb Bass Dupl Elba Gran Kpel Loma Mend Merc Narb Nbat
Palm Sind Wara Afak Jurc Mroo Nshu Shrd Sora Takr Tang Wole Hluw Khoj Tirh Aghb Mahj Ahom
Hatr Modi Mult Pauc Sidd Adlm Bhks Marc Newa Osge Hanb Jamo Zsye Gonm Soyo Zanb Dogr Gong
Maka Medf Rohg Sogd Sogo Elym Hmnp Nand Wcho Chrs Diak Kits Yezi Cpmn Ougr Tnsa Toto Vith
Kawi Nagm
""".split()
ICU_SCRIPT_CODE = {code: number for number, code in enumerate(_ICU_ORDER)}
UNKNOWN = ICU_SCRIPT_CODE["Zzzz"]
INVALID = -1


@functools.lru_cache(maxsize=1)
def _table():
    from fontTools.unicodedata import Scripts  # Unicode's Scripts.txt
    values = [ICU_SCRIPT_CODE.get(code, UNKNOWN) for code in Scripts.VALUES]
    return Scripts.RANGES, values


def script_code(code_point: int) -> int:
    if not 0 <= code_point <= 0x10FFFF:
        return INVALID
    starts, values = _table()
    return values[bisect.bisect_right(starts, code_point) - 1]
