package bookkeeping

import "strings"

// Example returns the documented example chart (docs/BOOKKEEPING.md) of
// a media house in country ("NO": Norsk Standard Kontoplan numbers with
// SAF-T grouping codes and standard tax codes; "SE": BAS numbers), or
// false for a country without one. Merchants install it and adapt it.
func Example(country string) (Chart, bool) {
	switch strings.ToUpper(country) {
	case "NO":
		return Chart{
			Accounts: []BooksAccount{
				{"1500", "Kundefordringer", Asset, "balanseverdiForOmloepsmiddel", "1500"},
				{"1920", "Bankinnskudd", Asset, "balanseverdiForOmloepsmiddel", "1920"},
				{"1921", "Bankinnskudd, AvtaleGiro", Asset, "balanseverdiForOmloepsmiddel", "1920"},
				{"2700", "Utgående merverdiavgift", Liability, "kortsiktigGjeld", "2740"},
				{"2900", "Forskudd fra kunder (uopptjent inntekt)", Liability, "kortsiktigGjeld", "2900"},
				{"3000", "Salgsinntekt, avgiftspliktig", Revenue, "salgsinntekt", "3000"},
				{"3100", "Salgsinntekt aviser, avgiftsfritt (papir og digital)", Revenue, "salgsinntekt", "3100"},
				{"3200", "Gebyrer utenfor merverdiavgiftsloven", Revenue, "salgsinntekt", "3200"},
			},
			VATCodes: []BooksVATCode{
				{"25", "3", "2700"}, {"15", "31", "2700"}, {"12", "33", "2700"}, {"0", "5", "2700"},
			},
			ReceivableAccount: "1500",
			DeferredAccount:   "2900",
			Rules: []BooksRule{
				{Role: RoleRevenue, Account: "3000"},
				{Role: RoleRevenue, VATRate: "0", Account: "3100"},
				{Role: RoleRevenue, LineKind: "Charge", VATRate: "0", Account: "3200"},
				{Role: RoleBank, Account: "1920"},
				{Role: RoleBank, Provider: "AvtaleGiro", Account: "1921"},
			},
		}, true
	case "SE":
		return Chart{
			Accounts: []BooksAccount{
				{"1510", "Kundfordringar", Asset, "", ""},
				{"1930", "Företagskonto", Asset, "", ""},
				{"1931", "Bankkonto Autogiro", Asset, "", ""},
				{"2611", "Utgående moms 25 %", Liability, "", ""},
				{"2621", "Utgående moms 12 %", Liability, "", ""},
				{"2631", "Utgående moms 6 %", Liability, "", ""},
				{"2970", "Förutbetalda intäkter", Liability, "", ""},
				{"3001", "Försäljning inom Sverige, 25 % moms", Revenue, "", ""},
				{"3002", "Försäljning inom Sverige, 12 % moms", Revenue, "", ""},
				{"3003", "Försäljning tidningar, 6 % moms", Revenue, "", ""},
				{"3990", "Påminnelseavgifter och övriga intäkter", Revenue, "", ""},
			},
			VATCodes: []BooksVATCode{
				{"25", "3", "2611"}, {"12", "31", "2621"}, {"6", "33", "2631"}, {"0", "6", "2611"},
			},
			ReceivableAccount: "1510",
			DeferredAccount:   "2970",
			Rules: []BooksRule{
				{Role: RoleRevenue, Account: "3001"},
				{Role: RoleRevenue, VATRate: "12", Account: "3002"},
				{Role: RoleRevenue, VATRate: "6", Account: "3003"},
				{Role: RoleRevenue, VATRate: "0", Account: "3990"},
				{Role: RoleBank, Account: "1930"},
				{Role: RoleBank, Provider: "Autogiro", Account: "1931"},
			},
		}, true
	}
	return Chart{}, false
}
