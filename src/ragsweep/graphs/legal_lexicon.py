"""The word lists and patterns ``graphs.legal_patterns`` reads legal drafting with: function words (determiners,
prepositions, clause boundaries, openers), section references and headings, aliases, definitions, modal and
reporting verbs, and the punctuation that ends a clause. Data, kept apart from the extraction that reads it."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DETERMINERS = _words(
    "the a an each any every such all this that these those its their his her our your my no some said"
)
PREPS = _words(
    "to by for in into on at with without from within under after before over per plus during upon "
    "against about through via between among across towards toward until"
)
BOUNDARY = _words(
    "that which who whom whose where wherever when whenever while if unless until within under pursuant "
    "except including excluding once provided whether because than is are was were be been being has "
    "have had shall must may will would should can could cannot does do did means includes "
    "you we they he she"
)
CONJ = _words("and or but nor")
NEW_NP = _words("every each all any no some such this these those")
NP_JOINERS = PREPS | CONJ | {"of"}
STOP = (
    DETERMINERS
    | PREPS
    | BOUNDARY
    | CONJ
    | _words(
        "not of as it they them we us you he she him i me one there here other same following above below "
        "herein hereof thereof hereunder more less fewer longer later earlier higher lower sooner also only "
        "then yes note however whereas so etc january february march april june july august september october "
        "november december monday tuesday wednesday thursday friday saturday sunday"
    )
)
NOT_VERB = DETERMINERS | PREPS | CONJ | _words("as of it they we you he she i there")
LEADING = DETERMINERS | _words("which what whether how of")
PRONOUNS = _words("you we they he she")  # "the information you provide": a zero relative clause starts there
TAIL_FUNCTION = DETERMINERS | PREPS | CONJ | _words("of as other only also immediately promptly again once")
# "to" after these is a preposition ("relating to an ..."); elsewhere "to" + lowercase word starts a clause
TO_PREP_HEADS = _words(
    "relating related according due prior subject pursuant belonging referred applicable addition "
    "respect regard access up similar equal contrary attributable next and or paid given sent "
    "provided disclosed transferred made"
)
OPENERS = (
    _words(
        "if where when whenever unless once after before while although though provided whereas because "
        "since except notwithstanding as please"
    )
    | PREPS
)
DISCOURSE = _words(
    "additionally furthermore moreover however therefore thus hence accordingly also even finally "
    "further otherwise instead similarly generally"
)
SECTION_KEYS = {
    "sec.": "section",
    "art.": "article",
    "para.": "paragraph",
    "annexes": "annex",
    "appendices": "appendix",
}
LABEL_RANK = {"SECTION": 0, "PARTY": 1, "TERM": 2, "TOPIC": 3, "ENTITY": 4}

_ID = r"(?:\d{1,3}[a-z]?|[a-z]{1,2}|[ivxl]{1,5})"
_SECTION = (
    rf"(?P<para>§§?)\s*(?P<pnum>\d+[A-Za-z]?(?:\.\d+)*(?:\s?\({_ID}\))*)"
    r"|\b(?P<kw>sections?|sec\.|articles?|art\.|clauses?|schedules?|annex(?:es)?|appendix|appendices"
    r"|paragraphs?|para\.|parts?|chapters?|exhibits?|rules?|regulations?)\s*"
    rf"(?P<knum>\d+[A-Za-z]?(?:\.\d+[A-Za-z]?)*(?:\s?\({_ID}\))*|\({_ID}\)(?:\({_ID}\))*"
    r"|(?-i:[IVXLC]+|[A-Z])\b)"
)
SECTION_RE = re.compile(_SECTION, re.I)
SECTION_HINT_RE = re.compile(r"§|\d|\([a-z]{1,2}\)|\b[IVXLC]+\b")  # cheap pre-check: references carry one
HEADING_RE = re.compile(rf"^\s*(?P<ref>{_SECTION})\s*[.:\-–—]?\s+(?P<title>[A-Z][^.;!?]{{0,80}}?)\s*\.?\s*$", re.I)
HEADING_VERB_RE = re.compile(r"\b(?:shall|must|may|will|means|is|are)\b")
ENUM_RE = re.compile(
    r"^\s*(?:(?:\(\s*[0-9A-Za-z]{1,5}\s*\)|\[[0-9A-Za-z]{1,5}\]|\d{1,3}(?:\.\d{1,3})*[.)]"
    r"|[a-zA-Z][.)]|[ivxIVX]{1,5}[.)]|[•*·\-–—])\s+)+"
)
# Sentence ends, but not after "Ltd.", "e.g.", "No.", initials ...: fixed-width look-behinds, one per length.
SENT_SPLIT_RE = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:No|Co|Dr|Mr|Ms|St|cf|vs)\.)"
    r"(?<!\b(?:Inc|Ltd|Art|Sec|Nos|Mrs|e\.g|i\.e|U\.S)\.)(?<!\b(?:Corp|Para)\.)"
    r"[\"”’)]?\s+(?=[\"“(§A-Z])"
)
QUOTES_RE = re.compile(r"[\"“”]")
QUOTED_RE = re.compile(r"[\"“]([^\"”]{1,60})[\"”]")
QUANT_RE = re.compile(
    r"^(?:up to|(?:at )?least|at most|(?:no |not )?(?:more|less|fewer) than"
    r"|a (?:maximum|minimum) of)\s+",
    re.I,
)
BARE_NUMBER_RE = re.compile(r"[\d\s.,/%$€£()\-]+")
POSSESSIVE_RE = re.compile(r"(?:['’]s|(?<=s)['’])$")
EDGE = " \t'\"“”‘’.,;:!?()[]{}*•-–—"
_CAP = r"[A-Z][A-Za-z0-9&'’\-]*"
CAP_PHRASE_RE = re.compile(rf"\b{_CAP}(?:\s+(?:(?:of|for|de)\s+)?{_CAP})*")
ALIAS_RE = re.compile(
    rf"(?P<name>{_CAP}\.?(?:\s+(?:(?:of|and|&|de|for)\s+)?{_CAP}\.?)*)\s*,?\s*\(\s*"
    r"(?:(?:hereinafter|hereafter)(?:\s+(?:referred\s+to\s+as|called))?\s*,?\s*)?(?:the\s+)?"
    r"[\"“](?P<alias>[^\"”]{1,60})[\"”]\s*\)"
)
_DEF_VERB = r"(?:shall\s+mean|means|shall\s+refer\s+to|refers\s+to|shall\s+include|includes|is\s+defined\s+as|denotes)"
DEF_QUOTED_RE = re.compile(
    r"(?:\bthe\s+(?:term|expression|word)\s+)?[\"“](?P<term>[^\"”]{1,80})[\"”]\s*"
    rf"(?:\([^)]{{0,40}}\)\s*)?,?\s*{_DEF_VERB}\s+(?P<defn>.+)"
)
DEF_BARE_RE = re.compile(
    r"^(?P<term>[A-Z][\w'’\-]*(?:\s+[A-Za-z][\w'’\-]*){0,4})\s+"
    r"(?:shall\s+mean|means|shall\s+refer\s+to|refers\s+to)\s+(?P<defn>.+)"
)
DEF_GLOSSARY_RE = re.compile(
    r"^(?P<term>[A-Z][\w'’\-]*(?:\s+(?:of|and|for|[A-Z][\w'’\-]*)){0,4})\s*:\s+"
    r"(?P<defn>[a-z].+)"
)
_ADVERBS = (
    r"(?:(?!(?:apply|comply|supply|reply|rely|imply|multiply|family|assembly|july|italy|ally|rally|tally)\b)"
    r"[a-z]{3,}ly|also|further|then|otherwise|still|thereafter|once|sometimes|always|often|even|now|first)"
)
MODAL_RE = re.compile(
    r"\b(?:(?P<modal>shall|must|may|will|should|cannot|can)(?P<neg>\s+(?:not|never)\b)?"
    r"|(?:is|are)\s+(?P<state>required|entitled|obliged|obligated|permitted|authori[sz]ed|prohibited|allowed)"
    rf"\s+(?P<tofrom>to|from))(?:\s+(?:{_ADVERBS}\s+)*(?:(?P<be>be)\s+(?:{_ADVERBS}\s+)*)?"
    r"(?P<verb>[a-z]+(?:-[a-z]+)*)\b"
    r"(?:\s+(?P<part>out|up|off|over|back|down|away)\b(?!\s+to\b))?)?"
)
REPORTING_THAT_RE = re.compile(
    r"\b(?:warrants?|represents?|agrees?|acknowledges?|confirms?|certif(?:y|ies)"
    r"|ensures?|undertakes?|declares?|understands?|accepts?|believes?|states?|notes?)"
    r"\s+that\s+",
    re.I,
)
COORD_VERBS_RE = re.compile(
    r"^(?:\s*,\s*[a-z]+)*,?\s+(?:and|or|and/or)\s+[a-z]+(?:\s+[a-z]+)?\s+"
    r"(?=(?:the|a|an|any|such|its|their|all|your|our|this|these|those)\b|[A-Z0-9])"
)
LEAD_RE = re.compile(
    rf"^(?:(?:{_ADVERBS}|not|as|in accordance with|with respect to|in respect of|in relation to"
    r"|pursuant to|subject to|on behalf of|by way of|in addition to|prior to|according to|up to"
    r"|(?:and|or) \w+(?:ed|en)|at least|at most|(?:no |not )?(?:more|less|fewer) than|"
    + "|".join(sorted(PREPS))
    + r")\s+)+",
    re.I,
)
NEXT_PREP_RE = re.compile(r"\s(?:" + "|".join(sorted(PREPS | {"of"})) + r")\s", re.I)
CLAUSE_END_RE = re.compile(
    r"[;:]|\b(?:shall|must|may|will|unless|except|provided|if|when|where|whether|because"
    r"|so that)\b"
)
NEW_MAIN_CLAUSE_RE = re.compile(r",\s+(?:and|but|or|while|whereas)\s")
COMMA_RE = re.compile(r"[;:]|,(?!\d)")
LABEL_CLEAN_RE = re.compile(r"[^A-Z0-9]+")
