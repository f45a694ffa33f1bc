// The continent of a country (ISO 3166-1 alpha-2 → AF AN AS EU NA OC SA), as GeoNames assigns them: Turkey,
// Armenia, Azerbaijan and Georgia are Asia, Cyprus and Russia Europe. Routing rules (contract 7.1) and the
// analytics dimension read it; the IP database gives only the country.
export const CONTINENTS = ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA'] as const
export type Continent = (typeof CONTINENTS)[number]

const MEMBERS: Record<Continent, string> = {
  AF:
    'AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST ' +
    'SZ TD TG TN TZ UG YT ZA ZM ZW',
  AN: 'AQ BV GS HM TF',
  AS:
    'AE AF AM AZ BD BH BN BT CC CN CX GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TM TR ' +
    'TW UZ VN YE',
  EU:
    'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ ' +
    'SK SM UA VA XK',
  NA: 'AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI PA PM PR SV SX TC TT US VC VG VI',
  OC: 'AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TL TO TV UM VU WF WS',
  SA: 'AR BO BR CL CO EC FK GF GY PE PY SR UY VE',
}

const BY_COUNTRY = new Map<string, Continent>()
for (const continent of CONTINENTS) for (const country of MEMBERS[continent].split(' ')) BY_COUNTRY.set(country, continent)

/** The continent of an upper-case alpha-2 country code; null for a code no continent lists. */
export const continentOf = (country: string): Continent | null => BY_COUNTRY.get(country) ?? null
