"""Tune a second stage on one task's judged queries (``embedding-ttc tune``).

The queries are cut into tune and test (:mod:`.split`); on the tune queries the fusions a
search engineer would tune are fitted with ranx (:mod:`.fusion`), the library's programs and a
program search's are scored beside them (:mod:`.scoring`, :mod:`.served`), a rule written before
anything is fitted names one (:mod:`.rule`), and the test queries report it once
(:mod:`.report`). :mod:`.run` holds the steps and their records; :mod:`.deploy` reads the pick
back for ``index build --from-tune``.
"""
