"""Facts to hide in a haystack: pass keys and needle sentences, each with its question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from embedding_ttc.tasks.generated.draw import Draw


@dataclass(frozen=True)
class Fact:
    """One inserted sentence, the question it answers, and the strings that identify it.

    Every key appears in exactly one document of a generated task (its own), so the question
    has exactly one answering document.
    """

    sentence: str
    question: str
    keys: tuple[str, ...]


_FIRST_NAMES = (
    "Abigail", "Adrian", "Alice", "Amara", "Andre", "Astrid", "Beatrice", "Bruno", "Camille",
    "Cedric", "Clara", "Dalia", "Damian", "Delphine", "Desmond", "Elena", "Elias", "Esme",
    "Felix", "Fiona", "Gideon", "Greta", "Hana", "Hector", "Imogen", "Ines", "Isaac", "Ivo",
    "Jasper", "Joyce", "Julian", "Kaito", "Katrin", "Leander", "Lena", "Lucia", "Magnus",
    "Maren", "Mateo", "Mira", "Nadia", "Nathan", "Nico", "Noor", "Olga", "Oscar", "Petra",
    "Quentin", "Rafael", "Rosa", "Rufus", "Saskia", "Selim", "Sofia", "Tobias", "Ulla",
    "Vera", "Viktor", "Wanda", "Xavier", "Yara", "Yusuf", "Zelda", "Zoran",
)  # fmt: skip

_LAST_NAMES = (
    "Abbott", "Alvarez", "Bergstrom", "Blackwood", "Bradshaw", "Castellano", "Chowdhury",
    "Dahl", "Delacroix", "Eriksen", "Fairbanks", "Fontaine", "Gallagher", "Haddad",
    "Hargreaves", "Ingram", "Jankowski", "Kaminski", "Kowalczyk", "Lambert", "Lindqvist",
    "Marchetti", "Mendoza", "Munoz", "Nakamura", "Novak", "Okafor", "Oyelaran", "Pemberton",
    "Petrakis", "Quintero", "Rasmussen", "Renwick", "Sandoval", "Schreiber", "Sorensen",
    "Takahashi", "Thornbury", "Underwood", "Vasquez", "Vukovic", "Whitlock", "Yamamoto",
    "Zielinski", "Achterberg", "Bianchi", "Carrington", "Dragomir", "Esposito", "Falkner",
    "Grimaldi", "Holloway", "Iversen", "Jablonski", "Kerrigan", "Lockhart", "Moreau",
    "Nieminen", "Ostrowski", "Pellegrini", "Rosenthal", "Szabo", "Tremblay", "Van der Berg",
)  # fmt: skip

_CITIES = (
    "Lisbon", "Porto", "Valencia", "Seville", "Marseille", "Bordeaux", "Genoa", "Naples",
    "Krakow", "Gdansk", "Ljubljana", "Zagreb", "Tallinn", "Riga", "Vilnius", "Bergen",
    "Gothenburg", "Aarhus", "Antwerp", "Ghent", "Salzburg", "Bratislava", "Thessaloniki",
    "Tbilisi", "Yerevan", "Montreal", "Halifax", "Quito", "Cusco", "Valparaiso", "Oaxaca",
    "Hobart", "Dunedin", "Kyoto", "Busan", "Hanoi", "Chiang Mai", "Zanzibar", "Marrakesh",
    "Windhoek",
)  # fmt: skip

_ISLANDS = (
    "Gorse Island", "Marrow Isle", "Little Skerry", "Kelpie Rock", "Hollin Island",
    "Saltmarsh Cay", "Brackenholm", "Wrenna Isle", "Tern Holm", "Fennick Island",
    "Coppice Isle", "Ravenscar Island", "Lantern Key", "Mistle Island", "Heron Holm",
    "Brindle Isle", "Oyster Skerry", "Thistle Key", "Gannet Rock", "Quillan Island",
    "Puffin Holm", "Cormorant Isle", "Selkie Skerry", "Bramble Key", "Lapwing Island",
    "Driftwood Isle", "Kittiwake Rock", "Samphire Island", "Curlew Holm", "Foxglove Isle",
    "Pennywort Key", "Sorrel Island", "Wolfsbane Skerry", "Tamarisk Isle", "Eider Holm",
    "Marram Island", "Sandpiper Key", "Clover Isle", "Whimbrel Rock", "Bladderwrack Island",
)  # fmt: skip

_ACTIVITIES = (
    "to eat a sandwich on the old harbour wall on a sunny afternoon",
    "to walk the river path at dawn before the bakeries open",
    "to take the night tram to the end of the line and back",
    "to swim in the cold lake behind the botanical garden",
    "to rent a rowing boat and drift under the seven bridges",
    "to climb the bell tower just before the evening chimes",
    "to buy warm chestnuts from the cart outside the opera house",
    "to watch the fishing fleet come in from the breakwater",
    "to spend a rainy morning in the map room of the public library",
    "to cycle along the canal to the windmill and eat pancakes there",
)  # fmt: skip

_DISHES = ("lentil soup", "apple crumble", "fish stew", "tomato sauce", "walnut bread",
           "bean chili", "plum cake", "mushroom risotto")  # fmt: skip
_INGREDIENTS = ("a pinch of smoked paprika", "a spoonful of orange marmalade",
                "a splash of strong black coffee", "grated dark chocolate",
                "a handful of crushed juniper berries", "a little anchovy paste",
                "toasted fennel seeds", "a drop of rose water")  # fmt: skip
_FERRY_TIMES = ("a quarter past five", "ten to six", "twenty past six", "half past six",
                "a quarter to seven", "five past seven", "half past seven")  # fmt: skip
_ANIMALS = ("tortoise", "parrot", "ferret", "goat", "donkey", "goldfish", "hedgehog", "cat")
_PET_NAMES = ("Biscuit", "Admiral", "Pickle", "Marmalade", "Socrates", "Tofu", "Juniper",
              "Captain Whiskers", "Noodle", "Professor Plum")  # fmt: skip
_BUILDINGS = ("boathouse", "greenhouse", "workshop", "beach hut", "garden shed", "chapel")
_HIDING_PLACES = (
    "under the third flowerpot from the left", "inside a hollow garden gnome",
    "taped beneath the rain barrel", "in an old tea tin on the top shelf",
    "behind the loose brick by the door", "in the pocket of a yellow raincoat",
)  # fmt: skip
_INSTRUMENTS = ("cello", "accordion", "bassoon", "harp", "banjo", "oboe", "marimba", "tuba")
_VENUES = ("in the back room of a laundrette", "on the roof of the public library",
           "in a disused railway carriage", "in the crypt of a small church",
           "in the boiler room of an old hotel", "under the pier at low tide")  # fmt: skip
_COLOURS = ("red and white", "blue and yellow", "black and gold", "green and cream",
            "orange and grey", "purple and silver")  # fmt: skip


def _person(draw: Draw) -> str:
    return f"{draw.choice(_FIRST_NAMES)} {draw.choice(_LAST_NAMES)}"


def draw_passkey(draw: Draw) -> Fact:
    """Draw a named pass key: ``<Name>'s pass key is 12345. Remember it. ...``."""
    name = _person(draw)
    key = str(10_000 + draw.below(90_000))
    return Fact(
        sentence=f"{name}'s pass key is {key}. Remember it. {key} is the pass key for {name}.",
        question=f"what is the passkey for {name}?",
        keys=(name, key),
    )


def _needle_best_thing(draw: Draw) -> Fact:
    city = draw.choice(_CITIES)
    return Fact(
        sentence=f"The best thing to do in {city} is {draw.choice(_ACTIVITIES)}.",
        question=f"What is the best thing to do in {city}?",
        keys=(city,),
    )


def _needle_ingredient(draw: Draw) -> Fact:
    person, dish = _person(draw), draw.choice(_DISHES)
    return Fact(
        sentence=f"The secret ingredient in {person}'s {dish} is {draw.choice(_INGREDIENTS)}.",
        question=f"What is the secret ingredient in {person}'s {dish}?",
        keys=(person,),
    )


def _needle_ferry(draw: Draw) -> Fact:
    island = draw.choice(_ISLANDS)
    return Fact(
        sentence=f"The first ferry to {island} leaves at {draw.choice(_FERRY_TIMES)} every "
        "morning except Sundays.",
        question=f"When does the first ferry to {island} leave?",
        keys=(island,),
    )


def _needle_pet(draw: Draw) -> Fact:
    person, animal = _person(draw), draw.choice(_ANIMALS)
    return Fact(
        sentence=f"{person} has a pet {animal} called {draw.choice(_PET_NAMES)}.",
        question=f"What is the name of {person}'s pet {animal}?",
        keys=(person,),
    )


def _needle_hidden_key(draw: Draw) -> Fact:
    person, building = _person(draw), draw.choice(_BUILDINGS)
    return Fact(
        sentence=f"{person} keeps the spare key to the {building} {draw.choice(_HIDING_PLACES)}.",
        question=f"Where does {person} keep the spare key to the {building}?",
        keys=(person,),
    )


def _needle_rehearsal(draw: Draw) -> Fact:
    person, instrument = _person(draw), draw.choice(_INSTRUMENTS)
    return Fact(
        sentence=f"{person} practises the {instrument} {draw.choice(_VENUES)}.",
        question=f"Where does {person} practise the {instrument}?",
        keys=(person,),
    )


def _needle_lighthouse(draw: Draw) -> Fact:
    island = draw.choice(_ISLANDS)
    return Fact(
        sentence=f"The lighthouse on {island} is painted in {draw.choice(_COLOURS)} stripes.",
        question=f"What colours is the lighthouse on {island} painted?",
        keys=(island,),
    )


_NEEDLE_TEMPLATES: tuple[Callable[[Draw], Fact], ...] = (
    _needle_best_thing,
    _needle_ingredient,
    _needle_ferry,
    _needle_pet,
    _needle_hidden_key,
    _needle_rehearsal,
    _needle_lighthouse,
)


def draw_needle(draw: Draw) -> Fact:
    """Draw a needle sentence from one of the built-in templates, with its question."""
    return draw.choice(_NEEDLE_TEMPLATES)(draw)
